package console

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// page is what the layout renders around a view.
type page struct {
	// Title is the page's title and heading.
	Title string
	// Section is the navigation entry of the view.
	Section string
	// Hub describes the hub.
	Hub string
	// Hidden lists what the caller's RBAC hides.
	Hidden []string
	// CSRF is the session's token for action forms.
	CSRF string
	// Query fills the header's search box.
	Query string
	// Data is the view's own model.
	Data any
}

// pageTemplate is the layout with one view's "content".
type pageTemplate struct{ t *template.Template }

var funcs = template.FuncMap{
	"ago":   ago,
	"join":  strings.Join,
	"state": stateOf,
	"cond":  condition,
	"lower": strings.ToLower,
	"pct":   func(a, b int) int { return percent(a, b) },
	"add":   func(a, b int) int { return a + b },
	"mul22": func(n int) int { return n * 22 },
	"timefmt": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
}

func parsePages() (map[string]*pageTemplate, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*pageTemplate{}
	for _, name := range []string{"fleet", "cluster", "rollouts", "rollout", "placements", "placement", "addons", "addon", "governance", "cell", "search", "result", "confirm", "notfound"} {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = &pageTemplate{t: t}
	}
	return out, nil
}

// view serves one view: the whole page, or with ?partial=1 only its
// content, which the page's script swaps in on a change. A view whose
// object is not there (or hidden by RBAC) answers with the not-found
// page, in the view's section.
func (s *server) view(name string, build func(r *http.Request) (*page, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := build(r)
		if err != nil {
			s.notFound(w, r, sectionOf[name], err.Error())
			return
		}
		s.render(w, r, name, p)
	}
}

// sectionOf is the navigation section of each view, and the list a
// not-found page leads back to.
var sectionOf = map[string]string{
	"fleet": "fleet", "cluster": "fleet", "rollouts": "rollouts", "rollout": "rollouts",
	"placements": "placements", "placement": "placements", "addons": "addons", "addon": "addons", "governance": "governance", "cell": "governance", "search": "search",
}

// sectionTitle is a section's name where it is not its path's.
var sectionTitle = map[string]string{"addons": "Add-ons"}

// notFoundData is the model of the not-found page.
type notFoundData struct {
	Message string
	// Back is the list of the section, e.g. /fleet.
	Back, BackTitle string
}

// notFound answers 404 with the console's own page.
func (s *server) notFound(w http.ResponseWriter, r *http.Request, section, msg string) {
	if section == "" {
		section = "fleet"
	}
	d := notFoundData{Message: msg, Back: "/" + section, BackTitle: cmp.Or(sectionTitle[section], strings.ToUpper(section[:1])+section[1:])}
	s.renderStatus(w, r, "notfound", &page{Title: "Not found", Section: section, Data: d}, http.StatusNotFound)
}

func (s *server) render(w http.ResponseWriter, r *http.Request, name string, p *page) {
	s.renderStatus(w, r, name, p, http.StatusOK)
}

func (s *server) renderStatus(w http.ResponseWriter, r *http.Request, name string, p *page, status int) {
	p.Hub, p.Hidden, p.CSRF = s.opts.Hub, s.store.hidden(), csrfOf(r)
	tmpl := "layout.html"
	if r.URL.Query().Get("partial") == "1" {
		tmpl = "content"
	}
	var buf bytes.Buffer
	if err := s.pages[name].t.ExecuteTemplate(&buf, tmpl, p); err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// serveEvents streams a "change" event whenever an informer saw one, at
// most every changeInterval, and a comment now and then to keep the
// connection open.
func (s *server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	// Subscribe before the page hears the stream is open: the page fetches
	// its view again on "open", and a change between that fetch and a later
	// subscription would never reach it.
	ch, cancel := s.notify.subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	fl.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	n := 0
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-ch:
			// Let a burst of changes settle into one event.
			select {
			case <-r.Context().Done():
				return
			case <-time.After(changeInterval):
			}
			n++
			fmt.Fprintf(w, "event: change\ndata: %d\n\n", n)
		}
		fl.Flush()
	}
}

// changeInterval is the least time between two change events of one page.
const changeInterval = 150 * time.Millisecond

// ago says how long ago t was, shortly.
func ago(t metav1.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := time.Since(t.Time).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// badge is a state as text and icon, and the CSS class that colours it.
type badge struct {
	Text, Icon, Class string
}

// stateOf turns a state word into a badge: colour never carries it alone.
func stateOf(s string) badge {
	switch s {
	case "Available", "True", "Compliant", "Complete", "Connected", "Applied", "Succeeded", "Chosen", "Valid":
		return badge{s, "✔", "ok"}
	case "Unavailable", "False", "NonCompliant", "Failed", "Degraded", "Stopped", "Disconnected", "Denied", "Conflict",
		workv1alpha1.ReasonRolledBack, workv1alpha1.ReasonRollbackFailed, workv1alpha1.ReasonNoCompleteRevision:
		return badge{s, "✖", "bad"}
	case "Pending", "Progressing", "Paused", "Waiting", "Deleting", workv1alpha1.ReasonRollingBack:
		return badge{s, "◐", "wait"}
	case "", "—":
		return badge{"—", "", "none"}
	}
	return badge{s, "?", "unknown"}
}

// condition is the status of condition t, or "—".
func condition(conds []metav1.Condition, t string) string {
	c := meta.FindStatusCondition(conds, t)
	if c == nil {
		return "—"
	}
	return string(c.Status)
}

func percent(a, b int) int {
	if b == 0 {
		return 0
	}
	return a * 100 / b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
