package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// testServer is a console whose store sees nothing: enough for the
// checks in front of every view.
func testServer(t *testing.T) *server {
	t.Helper()
	s, err := newServer(Options{Hub: "test"}, &store{access: map[string]access{}}, newNotifier(), 7080)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends one request; headers are name, value pairs.
func do(s *server, method, target, host, cookie string, form url.Values, origin string, headers ...string) *httptest.ResponseRecorder {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequest(method, target, body)
	r.Host = host
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		r.Header.Set("Cookie", cookie)
	}
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func TestAccess(t *testing.T) {
	s := testServer(t)
	const host = "127.0.0.1:7080"

	if w := do(s, "GET", "/static/console.css", host, "", nil, ""); w.Code != http.StatusForbidden {
		t.Fatalf("without a session: %d, want 403", w.Code)
	}
	if w := do(s, "GET", "/login?secret=wrong", host, "", nil, ""); w.Code != http.StatusForbidden {
		t.Fatalf("a wrong secret: %d, want 403", w.Code)
	}
	if w := do(s, "GET", "/login?secret="+s.auth.secret, "evil.example:7080", "", nil, ""); w.Code != http.StatusMisdirectedRequest {
		t.Fatalf("another host name: %d, want 421", w.Code)
	}
	w := do(s, "GET", "/login?secret="+s.auth.secret, host, "", nil, "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/fleet" {
		t.Fatalf("the secret: %d to %q, want 303 to /fleet", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Name != "flotilla-console-7080" {
		t.Fatalf("session cookie = %+v, want one HttpOnly SameSite=Strict cookie named after the port", cookies)
	}
	session := cookies[0].Name + "=" + cookies[0].Value
	if w := do(s, "GET", "/login?secret="+s.auth.secret, host, "", nil, ""); w.Code != http.StatusForbidden {
		t.Fatalf("the secret a second time: %d, want 403", w.Code)
	}
	if w := do(s, "GET", "/static/console.css", "localhost:7080", session, nil, ""); w.Code != http.StatusOK {
		t.Fatalf("with the session: %d, want 200", w.Code)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}

	csrf := s.auth.sessions[cookies[0].Value]
	form := url.Values{"csrf": {csrf}, "cluster": {"c1"}}
	if w := do(s, "POST", "/actions/deny", host, session, form, "http://127.0.0.1:9999"); w.Code != http.StatusForbidden {
		t.Errorf("an action from another origin: %d, want 403", w.Code)
	}
	if w := do(s, "POST", "/actions/deny", host, session, url.Values{"csrf": {"forged"}, "cluster": {"c1"}}, "http://"+host); w.Code != http.StatusForbidden {
		t.Errorf("an action with a wrong CSRF token: %d, want 403", w.Code)
	}
	if w := do(s, "POST", "/actions/nonsense", host, session, form, "http://"+host); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `unknown action &#34;nonsense&#34;`) {
		t.Errorf("an unknown action: %d %q", w.Code, w.Body.String())
	}
}
