package cmdutil

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLabelSelector(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "env=prod,region in (eu,us)", want: "env=prod,region in (eu,us)"},
		{in: "tier notin (test),gpu", want: "gpu,tier notin (test)"},
		{in: "env=", want: "env="},
		{in: "region in (eu,)", want: "region in (,eu)"},
		{in: "env in ()", wantErr: `--label-selectors "env in ()": the requirement 'env in ()' lists no values: give at least one, e.g. 'env in (a,b)', or write 'env' (the label is set) or '!env' (it is not)`},
		{in: "a=b,env notin ( )", wantErr: `the requirement 'env notin ()' lists no values`},
		{in: "env in (", wantErr: `--label-selectors "env in (": couldn't parse`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sel, err := ParseLabelSelector("--label-selectors", tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := metav1.FormatLabelSelector(sel); got != tt.want {
				t.Errorf("selector %s, want %s", got, tt.want)
			}
		})
	}
}
