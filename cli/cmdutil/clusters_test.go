package cmdutil

import (
	"strings"
	"testing"
)

func TestValidateClusterName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"cluster1", ""},
		{"a", ""},
		{"edge-eu-west-1", ""},
		{strings.Repeat("a", 63), ""},
		{"", "empty"},
		{strings.Repeat("a", 64), "63"},
		{"Cluster1", "lowercase"},
		{"cluster.1", "dots"},
		{"cluster.1", "dots"},
		{"-cluster", "lowercase"},
		{"cluster-", "lowercase"},
	}
	for _, tt := range tests {
		err := ValidateClusterName(tt.name)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%q: got %v, want an error mentioning %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestCleanClusterList(t *testing.T) {
	got := CleanClusterList([]string{"a", " b", "a", "", "c "})
	if strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("cleanClusterList = %q", got)
	}
}
