package registration

import (
	"crypto/x509"
	"time"
)

// The contract rotates a certificate when between rotateAtMin and
// rotateAtMax of its life is left, drawn at random per certificate so that
// agents that joined together do not renew together.
const (
	rotateAtMin = 0.20
	rotateAtMax = 0.25
)

// rotationDeadline is when to renew cert: renewBefore ahead of its expiry
// when that is set, else when the fraction of its life given by
// rotateAtMin + draw·(rotateAtMax−rotateAtMin) is left, draw in [0, 1).
func rotationDeadline(cert *x509.Certificate, renewBefore time.Duration, draw float64) time.Time {
	if renewBefore > 0 {
		return cert.NotAfter.Add(-renewBefore)
	}
	life := cert.NotAfter.Sub(cert.NotBefore)
	left := rotateAtMin + draw*(rotateAtMax-rotateAtMin)
	return cert.NotAfter.Add(-time.Duration(float64(life) * left))
}
