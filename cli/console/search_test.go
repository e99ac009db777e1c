package console

import (
	"net/http"
	"strings"
	"testing"
)

// Every page has the search box in its header; the search page fills it
// with its query and, without one, says what to type.
func TestSearchBoxOnEveryPage(t *testing.T) {
	s, session, _ := serverWith(t, nil, managedCluster("c1", true, true, nil))
	for _, target := range []string{"/fleet", "/clusters/c1", "/rollouts", "/placements", "/addons", "/governance", "/nonsense"} {
		body := do(s, "GET", target, testHost, session, nil, "").Body.String()
		if !strings.Contains(body, `<form class="search" role="search" method="get" action="/search">`) || !strings.Contains(body, `name="q" value=""`) {
			t.Errorf("GET %s: the header has no empty search box:\n%s", target, body)
		}
	}
	w := do(s, "GET", "/search?q=", testHost, session, nil, "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Find objects in every cluster you may see") || strings.Contains(w.Body.String(), `id="results"`) {
		t.Errorf("GET /search without a query: %d, want 200 with the hint and no results:\n%s", w.Code, w.Body.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"kind=Pod": "'kind=Pod'", "it's": `'it'\''s'`} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
