package policytemplate

import (
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MessageLimit is the most bytes of a message that a person reads in a
// list: an Event's message (the API server refuses an Event with an
// eventTime whose message is longer, and events.k8s.io/v1 notes), a
// history entry, a compliancy condition. OCM's config-policy-controller
// keeps its status events to the same length.
const MessageLimit = 1024

// DetailLimit is the most bytes of a message kept for reference (the
// structured results, the hub-templates-error annotation): long enough
// for any error worth reading, short enough that a status of many of them
// stays far below the API server's limit on an object.
const DetailLimit = 8192

// Cap returns msg cut to at most limit bytes, on a character boundary,
// ending with an ellipsis that says how long msg was and where (when not
// empty) the whole text is.
func Cap(msg string, limit int, where string) string {
	if len(msg) <= limit {
		return msg
	}
	tail := " … [" + strconv.Itoa(len(msg)) + " bytes, cut"
	if where != "" {
		tail += "; " + where
	}
	tail += "]"
	n := limit - len(tail)
	if n < 0 {
		tail, n = "…", limit-len("…")
	}
	for n > 0 && !utf8.RuneStart(msg[n]) {
		n--
	}
	return msg[:n] + tail
}

// Redacted replaces a value read from a Secret in a message.
const Redacted = "[redacted]"

// minRedacted is the shortest value that is redacted: shorter ones
// ("1", "true") would blank out the words of every message.
const minRedacted = 4

// Secrets are the values read from Secrets while templates were resolved
// (the zero value is empty and ready). Messages are built from names,
// kinds and field paths; Redact is the last line of defence for a value
// that an error echoed all the same (a function that quotes its argument,
// an API server that quotes the object it refused).
type Secrets struct {
	values map[string]bool
	sorted []string
}

// Add records the value v of a Secret's key: the bytes as text, their
// base64 encoding (as a Secret stores them), and each line of the text,
// also as Go and JSON escape them inside quotes, so that a value that a
// template indented or an error quoted is found too.
func (s *Secrets) Add(v []byte) {
	if len(v) == 0 {
		return
	}
	text := string(v)
	s.add(text)
	s.add(strings.TrimSpace(text)) // as toInt and toBool quote it
	s.add(base64.StdEncoding.EncodeToString(v))
	for _, line := range strings.Split(text, "\n") {
		s.add(strings.TrimSpace(line))
	}
}

// AddEncoded records a value as a Secret's data holds it, base64-encoded.
func (s *Secrets) AddEncoded(v string) {
	s.add(v)
	if data, err := base64.StdEncoding.DecodeString(v); err == nil {
		s.Add(data)
	}
}

func (s *Secrets) add(v string) {
	if len(v) < minRedacted {
		return
	}
	if s.values == nil {
		s.values = map[string]bool{}
	}
	forms := []string{v, strings.Trim(strconv.Quote(v), `"`)}
	if j, err := json.Marshal(v); err == nil {
		forms = append(forms, strings.Trim(string(j), `"`))
	}
	for _, f := range forms {
		if !s.values[f] {
			s.values[f] = true
			s.sorted = nil
		}
	}
}

// Empty says whether no value was recorded.
func (s *Secrets) Empty() bool { return s == nil || len(s.values) == 0 }

// Redact returns msg with every recorded value replaced by Redacted,
// longest first.
func (s *Secrets) Redact(msg string) string {
	if s.Empty() || msg == "" {
		return msg
	}
	if s.sorted == nil {
		for v := range s.values {
			s.sorted = append(s.sorted, v)
		}
		sort.Slice(s.sorted, func(i, j int) bool {
			if len(s.sorted[i]) != len(s.sorted[j]) {
				return len(s.sorted[i]) > len(s.sorted[j])
			}
			return s.sorted[i] < s.sorted[j]
		})
	}
	for _, v := range s.sorted {
		if strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, Redacted)
		}
	}
	return msg
}
