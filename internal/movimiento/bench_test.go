package movimiento

import "testing"

// BenchmarkParse is the consumer's per-message work for a plain body: Parse, then Huella.
func BenchmarkParse(b *testing.B) {
	body := []byte(plainBody)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		_ = m.Huella()
	}
}

// BenchmarkParseSNS is the same for the SNS envelope sample.
func BenchmarkParseSNS(b *testing.B) {
	body := snsSample(b)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		_ = m.Huella()
	}
}

func BenchmarkHuella(b *testing.B) {
	m, err := Parse([]byte(plainBody))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Huella()
	}
}
