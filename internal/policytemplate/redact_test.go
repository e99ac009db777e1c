package policytemplate

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

func TestCap(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes, two per character
	for _, tt := range []struct {
		name, msg, where string
		limit            int
		want             string
	}{
		{name: "short", msg: "fits", limit: 10, want: "fits"},
		{name: "exact", msg: "0123456789", limit: 10, want: "0123456789"},
		{name: "cut with where", msg: strings.Repeat("a", 40), limit: 36, where: "see x", want: "aaaaaaaaa … [40 bytes, cut; see x]"},
		{name: "where too long", msg: strings.Repeat("a", 40), limit: 10, where: "somewhere far too long", want: "aaaaaaa…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cap(tt.msg, tt.limit, tt.where); got != tt.want {
				t.Errorf("Cap = %q, want %q", got, tt.want)
			}
		})
	}
	got := Cap(long, MessageLimit, "see status.details[].results")
	if len(got) > MessageLimit || !strings.HasSuffix(got, "see status.details[].results]") || !strings.ContainsRune(got, 'é') {
		t.Errorf("Cap of %d bytes = %d bytes %q", len(long), len(got), got)
	}
	for i := range len(got) {
		if got[i] == 0xc3 && i+1 < len(got) && got[i+1] != 0xa9 {
			t.Fatalf("cut inside a character at %d", i)
		}
	}
}

func TestRedact(t *testing.T) {
	key := "-----BEGIN KEY-----\nMIIEowIBAAKCAQEAwgtCSXN9JTQtmitr9w\nghzwnz8/lnZ9yX25qfZRA8QS\"eO5jmr\n-----END KEY-----\n"
	var s Secrets
	s.Add([]byte(key))
	s.AddEncoded(base64.StdEncoding.EncodeToString([]byte("s3cr3t-marker")))
	s.Add([]byte("no")) // too short to redact
	for _, tt := range []struct{ name, msg, want string }{
		{"raw", "value " + key + " end", "value " + Redacted + " end"},
		{"base64", "data: " + base64.StdEncoding.EncodeToString([]byte(key)), "data: " + Redacted},
		{"Go-quoted", "parsing " + strconv.Quote(key), "parsing \"" + Redacted + "\""},
		{"trimmed, as toInt quotes it", "parsing " + strconv.Quote(strings.TrimSpace(key)), "parsing \"" + Redacted + "\""},
		{"indented line by line", "    MIIEowIBAAKCAQEAwgtCSXN9JTQtmitr9w\n    x", "    " + Redacted + "\n    x"},
		{"a line quoted", `Value:"ghzwnz8/lnZ9yX25qfZRA8QS\"eO5jmr"`, `Value:"` + Redacted + `"`},
		{"decoded from its encoding", "label s3cr3t-marker!", "label " + Redacted + "!"},
		{"short values stay", "no change", "no change"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Redact(tt.msg); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.msg, got, tt.want)
			}
		})
	}
	var none *Secrets
	if got := none.Redact("as is"); got != "as is" {
		t.Errorf("nil Secrets changed the message: %q", got)
	}
}
