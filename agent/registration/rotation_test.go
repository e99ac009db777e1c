package registration

import (
	"crypto/x509"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestRotationDeadline(t *testing.T) {
	issued := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cert := &x509.Certificate{NotBefore: issued, NotAfter: issued.Add(100 * time.Hour)}
	for _, tc := range []struct {
		name        string
		renewBefore time.Duration
		draw        float64
		want        time.Time
	}{
		{name: "20 % left at the lowest draw", draw: 0, want: issued.Add(80 * time.Hour)},
		{name: "22.5 % left halfway", draw: 0.5, want: issued.Add(77*time.Hour + 30*time.Minute)},
		{name: "almost 25 % left at the highest draw", draw: 0.999999, want: issued.Add(75 * time.Hour)},
		{name: "renewBefore overrides the fraction", renewBefore: 99 * time.Hour, draw: 0.7, want: issued.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := rotationDeadline(cert, tc.renewBefore, tc.draw)
			g.Expect(got).To(BeTemporally("~", tc.want, time.Second))
		})
	}
}

func TestRotationDeadlineStaysInTheContractsWindow(t *testing.T) {
	g := NewWithT(t)
	// The hub's signer backdates certificates by five minutes: the window
	// counts the whole life, backdating included.
	cert := &x509.Certificate{NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(15 * time.Minute)}
	for _, draw := range []float64{0, 0.1, 0.37, 0.5, 0.9, 0.9999} {
		left := cert.NotAfter.Sub(rotationDeadline(cert, 0, draw))
		g.Expect(left).To(BeNumerically(">=", 3*time.Minute), "draw %v", draw)               // 20 % of 15 min
		g.Expect(left).To(BeNumerically("<", 3*time.Minute+45*time.Second), "draw %v", draw) // 25 %
	}
}
