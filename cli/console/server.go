package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Actions are the actions the console shares with the CLI, done exactly as
// the CLI does them, with the caller's credentials.
type Actions interface {
	// Accept approves the cluster's pending CSRs and sets hubAcceptsClient.
	Accept(ctx context.Context, cluster string) error
	// Deny unsets hubAcceptsClient.
	Deny(ctx context.Context, cluster string) error
}

// Options configure the console.
type Options struct {
	// Config reaches the hub with the caller's credentials.
	Config *rest.Config
	// Scheme knows the Kubernetes and OCM types.
	Scheme *runtime.Scheme
	// Port is the port on 127.0.0.1; 0 picks a free one.
	Port int
	// Hub describes the hub in the page header, e.g. "https://127.0.0.1:6443 (context dev)".
	Hub string
	// Actions accept and deny clusters.
	Actions Actions
	// Out receives the console's URL, once it serves.
	Out io.Writer
	// Notef writes progress notes.
	Notef func(format string, args ...any)
}

// Run serves the console until ctx ends.
func Run(ctx context.Context, o Options) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w (pick another with --port)", o.Port, err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	// The informers log through controller-runtime's logger, which, never
	// set, prints a stack trace 30 s after start. klog honours -v, as the
	// rest of the command's logs do.
	ctrllog.SetLogger(klog.NewKlogr())
	o.Notef("Reading the fleet from %s ...", o.Hub)
	n := newNotifier()
	st, err := newStore(ctx, o.Config, o.Scheme, n)
	if err != nil {
		return fmt.Errorf("the hub at %s: %w", o.Config.Host, err)
	}
	srv, err := newServer(o, st, n, port)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	for _, h := range st.hidden() {
		o.Notef("Note: your hub RBAC does not let you list and watch %s; the console does not show them.", h)
	}
	fmt.Fprintf(o.Out, "Console: http://127.0.0.1:%d/login?secret=%s\n", port, srv.auth.secret)
	o.Notef("Open the URL above in a browser. Its secret works once; press Ctrl-C to stop the console.")
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// server is the console's HTTP handler.
type server struct {
	opts   Options
	store  *store
	notify *notifier
	auth   *auth
	pages  map[string]*pageTemplate
	mux    *http.ServeMux
}

func newServer(o Options, st *store, n *notifier, port int) (*server, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &server{opts: o, store: st, notify: n, auth: newAuth(port), pages: pages, mux: http.NewServeMux()}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/fleet", http.StatusSeeOther) })
	s.mux.HandleFunc("GET /events", s.serveEvents)
	s.mux.HandleFunc("GET /fleet", s.view("fleet", s.fleet))
	s.mux.HandleFunc("GET /clusters/{name}", s.view("cluster", s.cluster))
	s.mux.HandleFunc("GET /rollouts", s.view("rollouts", s.rollouts))
	s.mux.HandleFunc("GET /rollouts/{ns}/{name}", s.view("rollout", s.rollout))
	s.mux.HandleFunc("GET /placements", s.view("placements", s.placements))
	s.mux.HandleFunc("GET /placements/{ns}/{name}", s.view("placement", s.placement))
	s.mux.HandleFunc("GET /addons", s.view("addons", s.addOns))
	s.mux.HandleFunc("GET /addons/{name}", s.view("addon", s.addOn))
	s.mux.HandleFunc("GET /governance", s.view("governance", s.governance))
	s.mux.HandleFunc("GET /governance/{ns}/{name}/{cluster}", s.view("cell", s.cell))
	s.mux.HandleFunc("GET /search", s.view("search", s.search))
	s.mux.HandleFunc("POST /actions/{action}", s.act)
	s.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		s.notFound(w, r, "", "The console has no page "+r.URL.Path+".")
	})
	return s, nil
}

// ServeHTTP checks the host, the session and the security headers, then
// routes.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !s.auth.hostAllowed(r.Host) {
		http.Error(w, "the console answers only to http://127.0.0.1 and http://localhost on its own port", http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path == "/login" {
		s.auth.login(w, r)
		return
	}
	sess, ok := s.auth.session(r)
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintln(w, "Forbidden: open the URL that `flotilla console` printed. Its secret works once, in one browser; to open the console elsewhere, start `flotilla console` again.")
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess))
	s.mux.ServeHTTP(w, r)
}
