package compare

// Verdict sums up a Result for people: the money right and nothing held up, the money
// right but deliveries held up, or the money wrong.
type Verdict string

// The verdicts, from best to worst.
const (
	ExactlyOnce Verdict = "exactly once"
	Delayed     Verdict = "exactly once, delayed"
	WrongMoney  Verdict = "wrong money"
)

// Verdict is r's verdict.
func (r Result) Verdict() Verdict {
	switch {
	case !r.Correct():
		return WrongMoney
	case r.Stuck > 0:
		return Delayed
	}
	return ExactlyOnce
}
