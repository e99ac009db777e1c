package agent

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestValidate(t *testing.T) {
	valid := Options{ClusterName: "edge-1"}
	for _, tc := range []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "a cluster name is all it takes", change: func(*Options) {}},
		{name: "no cluster name", change: func(o *Options) { o.ClusterName = "" }, wantErr: "a cluster name is required (--cluster-name)"},
		{name: "upper case", change: func(o *Options) { o.ClusterName = "Edge-1" }, wantErr: `invalid cluster name "Edge-1": a lowercase RFC 1123 label`},
		{name: "a dot", change: func(o *Options) { o.ClusterName = "edge.1" }, wantErr: `invalid cluster name "edge.1"`},
		{name: "too long", change: func(o *Options) { o.ClusterName = "a123456789012345678901234567890123456789012345678901234567890123" }, wantErr: "must be no more than 63 characters"},
		{name: "an agent id with a colon", change: func(o *Options) { o.AgentID = "a:b" }, wantErr: `invalid agent id "a:b"`},
		{name: "an http spoke URL", change: func(o *Options) { o.SpokeAPIServerURL = "http://spoke:6443" }, wantErr: "want https://host[:port]"},
		{name: "a certificate shorter than the signer issues", change: func(o *Options) { o.CertificateExpiration = 5 * time.Minute }, wantErr: "no certificate shorter than 10m0s"},
		{name: "renewing before issuance", change: func(o *Options) { o.CertificateExpiration, o.RenewBefore = 10*time.Minute, 10*time.Minute }, wantErr: "renew-before 10m0s"},
		{name: "profiling without a metrics server", change: func(o *Options) { o.Profiling, o.MetricsAddr = true, "0" }, wantErr: "profiling is served on the metrics address"},
		{name: "profiling on the metrics server", change: func(o *Options) { o.Profiling, o.MetricsAddr = true, "127.0.0.1:9446" }},
		{name: "a negative lease", change: func(o *Options) { o.LeaseDurationSeconds = -1 }, wantErr: "must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			o := valid
			tc.change(&o)
			err := o.Validate()
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
			}
		})
	}
}
