package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// drained reads conn until it fails and returns the error.
func drained(conn net.Conn, deadline time.Time) error {
	_ = conn.SetReadDeadline(deadline)
	buf := make([]byte, 512)
	for {
		if _, err := conn.Read(buf); err != nil {
			return err
		}
	}
}

// TestTunnelClosedWhenCertificateExpires: the hub closes a tunnel when
// the client certificate that opened it expires, and not before.
func TestTunnelClosedWhenCertificateExpires(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewServer()
	go s.Serve(ctx)

	expiring, expiringAgent := net.Pipe()
	defer expiringAgent.Close()
	lasting, lastingAgent := net.Pipe()
	defer lastingAgent.Close()
	if err := s.accept("c1", expiring, time.Now().Add(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.accept("c2", lasting, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	if err := drained(expiringAgent, time.Now().Add(10*time.Second)); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("the tunnel of an expired certificate: read %v, want it closed", err)
	}
	if err := drained(lastingAgent, time.Now().Add(200*time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the tunnel of a valid certificate: read %v, want it open", err)
	}
}
