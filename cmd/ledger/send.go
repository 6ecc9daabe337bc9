package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ledger-dev/ledger/internal/app"
	"github.com/ledger-dev/ledger/internal/config"
	"github.com/ledger-dev/ledger/internal/consumer"
	"github.com/ledger-dev/ledger/internal/movimiento"
	"github.com/ledger-dev/ledger/internal/sim"
)

var sendCommand = command{
	name:    "send",
	summary: "publish movements (from a file or generated) to an SQS queue or an SNS topic",
	run:     runSend,
}

// sendAttempts bounds the tries of entries a batch call refused (throttling, say); the
// tries are sendBackoff apart, doubled each time.
const (
	sendAttempts = 3
	sendBackoff  = 200 * time.Millisecond
)

// day is a UTC calendar day, by which generated holds expire.
const day = 24 * time.Hour

// maxDuplicates bounds --duplicates: ten extra deliveries per movement is plenty.
const maxDuplicates = 10

// The most bytes of message bodies one batch call takes in all: beyond it the API
// refuses the whole call. SendMessageBatch takes 1 MiB; PublishBatch takes the topic's
// MaximumMessageSize, 256 KiB unless raised.
const (
	sqsBatchBytes = 1 << 20
	snsBatchBytes = 256 << 10
)

// callTimeout bounds one SendMessageBatch or PublishBatch call, the SDK's own retries
// included: an endpoint that takes the connection and never answers fails the send.
const callTimeout = 30 * time.Second

// sendHelp is ledger send's --help.
var sendHelp = helpText{synopsis: "(--queue-url U | --topic-arn A) (--from FILE|- | --generate N [--accounts K] [--seed S] [--duplicates F] [--transfers F] [--repartos F] [--reversals F] [--refunds F] [--holds F]) [--endpoint URL]", about: `
Sends movements to the SQS queue --queue-url, or publishes them to the SNS topic
--topic-arn, in batches: the lines of --from as they are, or the seeded workload of
--generate. SQS and SNS are called at --endpoint. One --seed sends the same movements
all UTC day, another seed new ones; on a later day one seed's holds expire later, so
they would be conflicting duplicates: take another seed. To a FIFO queue or topic (its
name ends in .fifo) each movement goes in its account's message group, with a hash of
its (cuenta, id) as deduplication id, and a generated workload goes in the order it
was generated; an entry SQS or SNS refuses and takes on a retry lands behind the rest
of its batch.`, example: `
ledger send --queue-url http://127.0.0.1:5000/123456789012/movimientos --endpoint http://127.0.0.1:5000 --generate 500 --duplicates 0.2
ledger send --queue-url http://127.0.0.1:5000/123456789012/movimientos --endpoint http://127.0.0.1:5000 --generate 500 --transfers 0.2 --repartos 0.05 --reversals 0.05 --refunds 0.05 --holds 0.1
ledger send --topic-arn arn:aws:sns:eu-west-1:123456789012:movimientos --from examples/movimientos.jsonl`}

// sendCmd is ledger send's command line.
type sendCmd struct {
	*flags
	queueURL, topicARN string
	from               string
	generate, accounts int
	seed               uint64
	duplicates         float64
	transfers          float64
	repartos           float64
	reversals          float64
	refunds            float64
	holds              float64
	endpoint           string
}

// newSendCmd declares ledger send's flags.
func newSendCmd(stdout, stderr io.Writer) *sendCmd {
	c := &sendCmd{flags: newFlags("send", sendHelp, stdout, stderr)}
	c.queueURLVar(&c.queueURL)
	c.StringVar(&c.topicARN, "topic-arn", "", "publish to this SNS topic")
	c.fromVar(&c.from)
	c.IntVar(&c.generate, "generate", 0, "generate this many movements instead: a seeded workload (the demo's generator), each movement meant to apply")
	c.accountsVar(&c.accounts, 10)
	c.seedVar(&c.seed)
	c.Float64Var(&c.duplicates, "duplicates", 0, "extra deliveries of generated movements, as a fraction (0.2: one in five sent twice)")
	c.Float64Var(&c.transfers, "transfers", 0, "share of the generated movements that are transfers between its accounts (0–1)")
	c.Float64Var(&c.repartos, "repartos", 0, "share of the generated movements that are repartos: a payer paying 2 to 5 other accounts of the workload, now and then up to 48 (0–1)")
	c.Float64Var(&c.reversals, "reversals", 0, "share of the generated movements that are whole reversals of earlier abonos, cargos, transfers and repartos (0–1)")
	c.Float64Var(&c.refunds, "refunds", 0, "share of the generated movements that are refunds of part of earlier abonos and cargos, 1 to 3 of each, sometimes until nothing is left (0–1)")
	c.Float64Var(&c.holds, "holds", 0, "share of the generated movements that are holds, later captured, released or left to expire in a day (0–1)")
	c.endpointVar(&c.endpoint)
	return c
}

// runSend is ledger send: it parses the command line, then validates it and runs.
func runSend(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newSendCmd(stdout, stderr)
	return c.execute(ctx, args, 0, c)
}

// validate checks that one destination and one source are given, the workload's
// shape, the file, then the destination and the endpoint.
func (c *sendCmd) validate() error {
	switch {
	case (c.queueURL == "") == (c.topicARN == ""):
		return errors.New("give exactly one of --queue-url and --topic-arn")
	case (c.from == "") == !c.given("generate"):
		return errors.New("give exactly one of --from and --generate")
	}
	if err := c.validateWorkload(); err != nil {
		return err
	}
	if err := checkFile(c.from); err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if c.queueURL != "" {
		if err := config.ValidateQueueURL(c.queueURL); err != nil {
			return fmt.Errorf("--queue-url: %w", err)
		}
	} else if a, err := arn.Parse(c.topicARN); err != nil || a.Service != "sns" {
		return fmt.Errorf("--topic-arn: %q is not an SNS topic ARN", c.topicARN)
	}
	return checkEndpointFlag("--endpoint", c.endpoint)
}

// validateWorkload checks the generated workload's size and shares, and that the
// flags that shape it come with --generate.
func (c *sendCmd) validateWorkload() error {
	switch {
	case c.given("generate") && (c.generate < 1 || c.generate > sim.MaxMovements):
		return fmt.Errorf("--generate must be within 1–%d, not %d", sim.MaxMovements, c.generate)
	case c.accounts < 1 || c.accounts > sim.MaxAccounts:
		return fmt.Errorf("--accounts must be within 1–%d, not %d", sim.MaxAccounts, c.accounts)
	case !(c.duplicates >= 0 && c.duplicates <= maxDuplicates):
		return fmt.Errorf("--duplicates must be within 0–%d, not %v", maxDuplicates, c.duplicates)
	}
	for _, share := range []struct {
		flag string
		v    float64
	}{{"--transfers", c.transfers}, {"--repartos", c.repartos}, {"--reversals", c.reversals}, {"--refunds", c.refunds}, {"--holds", c.holds}} {
		if !(share.v >= 0 && share.v <= 1) {
			return fmt.Errorf("%s must be within 0–1, not %v", share.flag, share.v)
		}
	}
	switch sum := c.transfers + c.repartos + c.reversals + c.refunds + c.holds; {
	case sum > 1:
		return fmt.Errorf("--transfers, --repartos, --reversals, --refunds and --holds add up to %v; together they may be at most 1", sum)
	case sum > 0 && c.generate == 0:
		return errors.New("--transfers, --repartos, --reversals, --refunds and --holds shape a generated workload: give them with --generate")
	case c.duplicates > 0 && c.generate == 0:
		return errors.New("--duplicates repeats generated movements: give it with --generate")
	case (c.given("accounts") || c.given("seed")) && c.generate == 0:
		return errors.New("--accounts and --seed shape a generated workload: give them with --generate")
	}
	return nil
}

// run checks the destination answers, then reads or generates the bodies, sends them
// and says how many went.
func (c *sendCmd) run(ctx context.Context) error {
	dest, err := c.destination(ctx)
	if err != nil {
		return err
	}
	spec := sim.Spec{Accounts: c.accounts, Movements: c.generate, Seed: c.seed, Transfers: c.transfers, Repartos: c.repartos,
		Reversals: c.reversals, Refunds: c.refunds, Holds: c.holds, Now: time.Now()}
	msgs, err := sendBodies(c.from, spec, c.duplicates, isFIFO(dest.name))
	if err != nil {
		return err
	}
	invalid := countInvalid(msgs)
	start := time.Now()
	sent, err := dest.send(ctx, msgs)
	fmt.Fprintf(c.stdout, "sent %d of %d messages to %s in %.1fs", sent, len(msgs), dest.name, time.Since(start).Seconds())
	if invalid > 0 {
		fmt.Fprintf(c.stdout, " (%d of them are not valid movements: the consumer will park them)", invalid)
	}
	fmt.Fprintln(c.stdout)
	return err
}

// destination is where send sends: a queue's URL or a topic's ARN, and the batch calls
// that send there.
type destination struct {
	name string
	send func(ctx context.Context, msgs []message) (int, error)
}

// destination makes the client for --queue-url or --topic-arn and makes sure it
// answers, before the bodies are read or generated.
func (c *sendCmd) destination(ctx context.Context) (destination, error) {
	awsCfg, err := loadAWS(ctx, c.endpoint)
	if err != nil {
		return destination{}, err
	}
	if c.queueURL == "" {
		t := app.SNS(awsCfg, c.endpoint)
		if err := checkTopic(ctx, t, c.topicARN); err != nil {
			return destination{}, err
		}
		return destination{c.topicARN, func(ctx context.Context, msgs []message) (int, error) {
			return publishSNS(ctx, t, c.topicARN, msgs)
		}}, nil
	}
	q := app.SQS(awsCfg, c.endpoint)
	if err := servedQueue(c.queueURL, q, "--endpoint"); err != nil {
		return destination{}, usageErr{err}
	}
	if _, err := checkQueue(ctx, q, "--queue-url", c.queueURL); err != nil {
		return destination{}, err
	}
	return destination{c.queueURL, func(ctx context.Context, msgs []message) (int, error) {
		return sendSQS(ctx, q, c.queueURL, msgs)
	}}, nil
}

// message is one body to send, parsed once: the movement it carries, if it is a valid
// one (the consumer parks one that is not).
type message struct {
	body  string
	mov   movimiento.Movimiento
	valid bool
}

// parseBodies parses each body, in order.
func parseBodies(bodies []string) []message {
	out := make([]message, len(bodies))
	for i, b := range bodies {
		m, err := movimiento.Parse([]byte(b))
		out[i] = message{body: b, mov: m, valid: err == nil}
	}
	return out
}

// countInvalid counts the messages that are not valid movements, for the summary.
func countInvalid(msgs []message) (invalid int) {
	for _, m := range msgs {
		if !m.valid {
			invalid++
		}
	}
	return invalid
}

// checkFile makes sure name ("" and "-" aside: nothing, and stdin) is a file that can be
// read, before any work starts.
func checkFile(name string) error {
	if name == "" || name == "-" {
		return nil
	}
	st, err := os.Stat(name)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory, not a file of JSON lines", name)
	case !st.Mode().IsRegular():
		return nil // a pipe: opening it waits for a writer, and would take its lines
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	return f.Close()
}

// sendBodies reads the messages from a JSON-lines file or, when spec has movements,
// generates them (generated), each parsed once.
func sendBodies(from string, spec sim.Spec, duplicates float64, ordered bool) ([]message, error) {
	if spec.Movements > 0 {
		return generated(spec, duplicates, ordered)
	}
	r, err := openFrom(from)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	lines, err := jsonLines(r)
	if err != nil {
		return nil, err
	}
	return parseBodies(lines), nil
}

// generated is spec's movements meant to apply with their duplicates: shuffled, or for
// a FIFO destination (ordered) in the workload's order. Holds expire counted from the
// start of the UTC day after spec.Now's, so a day's runs of one seed send the very same
// movements (a run again is duplicates, never conflicting ones), and each hold has at
// least a day to be taken.
func generated(spec sim.Spec, duplicates float64, ordered bool) ([]message, error) {
	spec.Now = spec.Now.UTC().Truncate(day).Add(day)
	w, err := sim.Generate(spec)
	if err != nil {
		return nil, err
	}
	schedule := sim.Deliveries(w, sim.Mix{Duplicates: duplicates}, spec.Seed)
	var bodies []string
	for _, d := range append(schedule.Deliveries, schedule.Tail...) {
		bodies = append(bodies, d.Body)
	}
	msgs := parseBodies(bodies)
	if ordered {
		byWorkload(w, msgs)
	}
	return msgs, nil
}

// openFrom opens a --from file, or stdin for "-".
func openFrom(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(name)
}

// jsonLines returns the lines of r that are not blank; a line over maxLine is an error.
func jsonLines(r io.Reader) ([]string, error) {
	var out []string
	for l, err := range readLines(r) {
		if err != nil {
			return nil, err
		}
		out = append(out, l.text)
	}
	return out, nil
}

// batchRefusal is why a batch API refused an entry. One the API blames on the sender (a
// body it will never take) is not tried again.
type batchRefusal struct {
	code, message string
	senderFault   bool
}

func (r batchRefusal) String() string { return r.code + ": " + r.message }

// batches splits msgs, in order, into batches of at most consumer.MaxBatch messages
// and maxBytes bytes of bodies in all: the batch APIs' limits. A body is at most
// maxLine bytes, which each API's maxBytes holds.
func batches(msgs []message, maxBytes int) [][]message {
	var out [][]message
	size := 0
	for _, m := range msgs {
		if n := len(out); n == 0 || len(out[n-1]) == consumer.MaxBatch || size+len(m.body) > maxBytes {
			out, size = append(out, nil), 0
		}
		out[len(out)-1] = append(out[len(out)-1], m)
		size += len(m.body)
	}
	return out
}

// entry is a message as a batch call carries it: with its id in the batch, its place
// there ("0", "1", …).
type entry struct {
	id  string
	msg message
}

// batchSend sends msgs in batches of at most maxBytes (see batches) through send, which
// takes a batch's pending entries, in order, and returns the ids of those it accepted
// and why it refused the others; refused entries go again, sendBackoff apart and
// doubling, at most sendAttempts times in all, except those refused for the sender's
// fault. It reports the first refusal it gave up on.
func batchSend(ctx context.Context, msgs []message, maxBytes int, send func(pending []entry) (accepted []string, refused map[string]batchRefusal, err error)) (int, error) {
	sent := 0
	var given []batchRefusal // refusals given up on
	for _, batch := range batches(msgs, maxBytes) {
		pending := make([]entry, len(batch))
		for i, m := range batch {
			pending[i] = entry{strconv.Itoa(i), m}
		}
		for attempt := 1; len(pending) > 0; attempt++ {
			accepted, refused, err := send(pending)
			if err != nil {
				return sent, err
			}
			var ok int
			var gaveUp []batchRefusal
			pending, ok, gaveUp = settle(pending, accepted, refused, attempt)
			sent, given = sent+ok, append(given, gaveUp...)
			if len(pending) > 0 && !sleep(ctx, sendBackoff<<(attempt-1)) {
				return sent, ctx.Err()
			}
		}
	}
	if len(given) > 0 {
		return sent, fmt.Errorf("%d message(s) refused, the first: %s", len(given), given[0])
	}
	return sent, nil
}

// settle sorts out a batch call's answer on attempt: the pending entries it accepted
// (counted), those given up on (refused for the sender's fault, or on the last
// attempt; one neither accepted nor refused counts as refused), and those left to try
// again, in order.
func settle(pending []entry, accepted []string, refused map[string]batchRefusal, attempt int) (left []entry, ok int, given []batchRefusal) {
	for _, e := range pending {
		if slices.Contains(accepted, e.id) {
			ok++
			continue
		}
		r, named := refused[e.id]
		if !named {
			r = batchRefusal{code: "Unanswered", message: "neither accepted nor refused"}
		}
		if r.senderFault || attempt == sendAttempts {
			given = append(given, r)
			continue
		}
		left = append(left, e)
	}
	return left, ok, given
}

// refusals are a batch API's refused entries by id (SQS's and SNS's entry types differ).
func refusals[E any](failed []E, of func(E) (id string, r batchRefusal)) map[string]batchRefusal {
	out := make(map[string]batchRefusal, len(failed))
	for _, e := range failed {
		id, r := of(e)
		out[id] = r
	}
	return out
}

// sendSQS sends msgs with SendMessageBatch, each batch's entries in order; to a FIFO
// queue, each with its message group and deduplication id (fifoFields).
func sendSQS(ctx context.Context, q *sqs.Client, queueURL string, msgs []message) (int, error) {
	return batchSend(ctx, msgs, sqsBatchBytes, func(pending []entry) ([]string, map[string]batchRefusal, error) {
		var entries []sqstypes.SendMessageBatchRequestEntry
		for _, e := range pending {
			group, dedup := fifoFields(queueURL, e.msg)
			entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(e.id), MessageBody: aws.String(e.msg.body),
				MessageGroupId: group, MessageDeduplicationId: dedup})
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		out, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
		if err != nil {
			return nil, nil, err
		}
		var ok []string
		for _, e := range out.Successful {
			ok = append(ok, aws.ToString(e.Id))
		}
		return ok, refusals(out.Failed, func(f sqstypes.BatchResultErrorEntry) (string, batchRefusal) {
			return aws.ToString(f.Id), batchRefusal{aws.ToString(f.Code), aws.ToString(f.Message), f.SenderFault}
		}), nil
	})
}

// publishSNS publishes msgs with PublishBatch, each batch's entries in order; to a
// FIFO topic, each with its message group and deduplication id (fifoFields).
func publishSNS(ctx context.Context, t *sns.Client, topicARN string, msgs []message) (int, error) {
	return batchSend(ctx, msgs, snsBatchBytes, func(pending []entry) ([]string, map[string]batchRefusal, error) {
		var entries []snstypes.PublishBatchRequestEntry
		for _, e := range pending {
			group, dedup := fifoFields(topicARN, e.msg)
			entries = append(entries, snstypes.PublishBatchRequestEntry{Id: aws.String(e.id), Message: aws.String(e.msg.body),
				MessageGroupId: group, MessageDeduplicationId: dedup})
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		out, err := t.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(topicARN), PublishBatchRequestEntries: entries})
		if err != nil {
			return nil, nil, err
		}
		var ok []string
		for _, e := range out.Successful {
			ok = append(ok, aws.ToString(e.Id))
		}
		return ok, refusals(out.Failed, func(f snstypes.BatchResultErrorEntry) (string, batchRefusal) {
			return aws.ToString(f.Id), batchRefusal{aws.ToString(f.Code), aws.ToString(f.Message), f.SenderFault}
		}), nil
	})
}
