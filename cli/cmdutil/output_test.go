package cmdutil

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrintTable(t *testing.T) {
	var out bytes.Buffer
	if err := PrintTable(&out, []string{"NAME", "ACCEPTED"}, [][]string{{"a-long-name", "True"}, {"b", "False"}}); err != nil {
		t.Fatal(err)
	}
	want := "NAME          ACCEPTED\na-long-name   True\nb             False\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestCheckOutput(t *testing.T) {
	tests := []struct {
		format string
		offers []string
		ok     bool
	}{
		{"", nil, true},
		{"json", []string{"json", "yaml"}, true},
		{"wide", []string{"json", "yaml"}, false},
		{"table", []string{"wide", "json", "yaml"}, false},
	}
	for _, tt := range tests {
		if err := CheckOutput(tt.format, tt.offers...); (err == nil) != tt.ok {
			t.Errorf("checkOutput(%q, %v) = %v, want ok=%t", tt.format, tt.offers, err, tt.ok)
		}
	}
}

func TestPrintTableTrimsTrailingSpaces(t *testing.T) {
	var out strings.Builder
	if err := PrintTable(&out, []string{"NAME", "DETAILS", "AGE"}, [][]string{{"a", "long details", "1m"}, {"  b", "x", ""}}); err != nil {
		t.Fatal(err)
	}
	want := "NAME   DETAILS        AGE\na      long details   1m\n  b    x\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
