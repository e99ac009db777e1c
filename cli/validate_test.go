package cli

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
		err := validateClusterName(tt.name)
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

func TestParseToken(t *testing.T) {
	tests := []struct {
		token string
		ok    bool
	}{
		{"abcdef.0123456789abcdef", true},
		{"", false},
		{"abcdef", false},
		{"ABCDEF.0123456789abcdef", false},
		{"abcdef.0123456789abcde", false},
		{"abcdef:0123456789abcdef", false},
		{"eyJhbGciOiJSUzI1NiJ9.e30.sig", false},
	}
	for _, tt := range tests {
		tok, err := parseToken(tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("parseToken(%q): err = %v, want ok=%t", tt.token, err, tt.ok)
		}
		if tt.ok && tok.String() != tt.token {
			t.Errorf("parseToken(%q).String() = %q", tt.token, tok.String())
		}
	}
}

func TestParseHubURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://hub.example.com:6443", true},
		{"https://192.0.2.10:6443", true},
		{"https://hub", true},
		{"http://hub.example.com:6443", false},
		{"hub.example.com:6443", false},
		{"https://", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, err := parseHubURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("parseHubURL(%q): err = %v, want ok=%t", tt.url, err, tt.ok)
		}
	}
}

func TestCleanClusterList(t *testing.T) {
	got := cleanClusterList([]string{"a", " b", "a", "", "c "})
	if strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("cleanClusterList = %q", got)
	}
}
