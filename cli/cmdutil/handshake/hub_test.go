package handshake

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestPrintData(t *testing.T) {
	info := JoinInfo{HubToken: "abcdef.0123456789abcdef", HubAPIServer: "https://hub:6443"}
	tests := []struct {
		format, want string
	}{
		{cmdutil.OutputJSON, "{\n  \"hub-token\": \"abcdef.0123456789abcdef\",\n  \"hub-apiserver\": \"https://hub:6443\"\n}\n"},
		{cmdutil.OutputYAML, "hub-apiserver: https://hub:6443\nhub-token: abcdef.0123456789abcdef\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := cmdutil.PrintData(&out, tt.format, info); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.format, diff)
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
		if _, err := ParseHubURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("parseHubURL(%q): err = %v, want ok=%t", tt.url, err, tt.ok)
		}
	}
}
