package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// auth keeps the one-time secret and the sessions it opened.
type auth struct {
	port int
	// cookie is the session cookie's name; it names the port, since
	// browsers share cookies between the ports of one host.
	cookie string
	mu     sync.Mutex
	// secret is the one-time secret of the printed URL; spent once used.
	secret string
	spent  bool
	// sessions maps a session id to its CSRF token.
	sessions map[string]string
}

// sessionKey is the context key of the request's session's CSRF token.
type sessionKey struct{}

func newAuth(port int) *auth {
	return &auth{port: port, cookie: fmt.Sprintf("flotilla-console-%d", port), secret: randomToken(), sessions: map[string]string{}}
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hostAllowed refuses other host names, so that a DNS name rebound to
// 127.0.0.1 cannot reach the console from another site.
func (a *auth) hostAllowed(host string) bool {
	p := fmt.Sprintf(":%d", a.port)
	return host == "127.0.0.1"+p || host == "localhost"+p
}

// origin is the console's own origin for a request's host.
func (a *auth) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o == "http://"+r.Host
}

// login spends the secret and opens a session.
func (a *auth) login(w http.ResponseWriter, r *http.Request) {
	got := r.URL.Query().Get("secret")
	a.mu.Lock()
	ok := !a.spent && subtle.ConstantTimeCompare([]byte(got), []byte(a.secret)) == 1
	var id string
	if ok {
		a.spent = true
		id = randomToken()
		a.sessions[id] = randomToken()
	}
	a.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintln(w, "Forbidden: this secret is wrong or was already used. Each URL that `flotilla console` prints opens one browser session; start `flotilla console` again for a new one.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: a.cookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	next := r.URL.Query().Get("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		next = "/fleet"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// session returns the CSRF token of the request's session.
func (a *auth) session(r *http.Request) (string, bool) {
	c, err := r.Cookie(a.cookie)
	if err != nil {
		return "", false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	csrf, ok := a.sessions[c.Value]
	return csrf, ok
}

// csrfOf is the CSRF token of the request's session.
func csrfOf(r *http.Request) string {
	s, _ := r.Context().Value(sessionKey{}).(string)
	return s
}
