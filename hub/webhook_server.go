package hub

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// sharedPortServer is a webhook.Server that listens with SO_REUSEPORT, so
// that the hub replicas of one machine serve one address between them.
// controller-runtime's server opens its listener itself, without a way to
// set socket options. Like that server, it needs no leadership: every
// replica serves.
type sharedPortServer struct {
	opts *WebhookOptions
	mux  *http.ServeMux

	mu      sync.Mutex
	started bool
}

var _ webhook.Server = (*sharedPortServer)(nil)

func newSharedPortServer(w *WebhookOptions) *sharedPortServer {
	return &sharedPortServer{opts: w, mux: http.NewServeMux()}
}

// NeedLeaderElection says that standbys serve the webhook too.
func (*sharedPortServer) NeedLeaderElection() bool { return false }

// Register serves hook at path.
func (s *sharedPortServer) Register(path string, hook http.Handler) { s.mux.Handle(path, hook) }

// WebhookMux is the server's multiplexer.
func (s *sharedPortServer) WebhookMux() *http.ServeMux { return s.mux }

// StartedChecker passes once this process listens. Dialing the address, as
// controller-runtime's checker does, could reach another replica.
func (s *sharedPortServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.started {
			return errors.New("webhook server has not been started yet")
		}
		return nil
	}
}

// Start serves until ctx ends, reloading the certificate when its files
// change (a rotated Secret).
func (s *sharedPortServer) Start(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	certs, err := certwatcher.New(filepath.Join(s.opts.CertDir, "tls.crt"), filepath.Join(s.opts.CertDir, "tls.key"))
	if err != nil {
		return fmt.Errorf("load the webhook's serving certificate: %w", err)
	}
	go func() {
		if err := certs.Start(ctx); err != nil {
			logger.Error(err, "Cannot watch the webhook's serving certificate")
		}
	}()
	l, err := s.opts.listen(ctx)
	if err != nil {
		return fmt.Errorf("listen on %s for the ManifestWork admission webhook: %w", s.opts.address(), err)
	}
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}, GetCertificate: certs.GetCertificate},
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-ctx.Done()
		// Closing the listener makes the kernel send new connections to the
		// other replicas at once; calls in flight may finish.
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			logger.Error(err, "Webhook server did not shut down cleanly")
		}
	}()
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	logger.Info("Serving the ManifestWork admission webhook on a shared port", "address", s.opts.address())
	if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-closed
	return nil
}
