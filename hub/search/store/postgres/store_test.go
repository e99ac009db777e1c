package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/postgres"
	"github.com/flotilla-io/flotilla/hub/search/store/storetest"
	pgserver "github.com/flotilla-io/flotilla/test/framework/postgres"
)

var databases atomic.Int64

// open returns a store on a database of its own on server.
func open(t *testing.T, server *pgserver.Server) *postgres.Store {
	t.Helper()
	dsn, err := server.CreateDatabase(context.Background(), fmt.Sprintf("test%d", databases.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	server := pgserver.New(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, server) })
}

func TestUnavailableAndBack(t *testing.T) {
	ctx := context.Background()
	server := pgserver.New(t)
	s := open(t, server)
	pod := searchv1alpha1.Object{Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "1"}
	if err := s.Apply(ctx, "a", []searchv1alpha1.Object{pod}, nil); err != nil {
		t.Fatal(err)
	}
	server.Stop()
	for name, call := range map[string]func() error{
		"Ping":          func() error { return s.Ping(ctx) },
		"Apply":         func() error { return s.Apply(ctx, "a", []searchv1alpha1.Object{pod}, nil) },
		"Query":         func() error { _, err := s.Query(ctx, store.Query{}); return err },
		"Versions":      func() error { _, err := s.Versions(ctx, "a", schema.GroupResource{Resource: "pods"}); return err },
		"Clusters":      func() error { _, err := s.Clusters(ctx); return err },
		"DeleteCluster": func() error { return s.DeleteCluster(ctx, "b") },
	} {
		if err := call(); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with the server stopped: %v, want ErrUnavailable", name, err)
		}
	}
	if err := server.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The pool drops the connections the stopped server closed and dials
	// again: within a few calls, every method works.
	gomega.NewWithT(t).Eventually(func() error { return s.Ping(ctx) }).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	pod.ResourceVersion = "2"
	pod.Labels = map[string]string{"back": "yes"}
	if err := s.Apply(ctx, "a", []searchv1alpha1.Object{pod}, nil); err != nil {
		t.Fatalf("Apply after the server came back: %v", err)
	}
	page, err := s.Query(ctx, store.Query{})
	if err != nil || len(page.Items) != 1 || page.Items[0].ResourceVersion != "2" {
		t.Fatalf("Query after the server came back: %+v, %v", page, err)
	}
}

func TestOpenWhileDown(t *testing.T) {
	ctx := context.Background()
	server := pgserver.New(t)
	dsn, err := server.CreateDatabase(ctx, "later")
	if err != nil {
		t.Fatal(err)
	}
	server.Stop()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open with the server down: %v, want a store that waits for it", err)
	}
	defer s.Close()
	if _, err := s.Query(ctx, store.Query{}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Query with the server down: %v, want ErrUnavailable", err)
	}
	if err := server.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pod := searchv1alpha1.Object{Version: "v1", Resource: "pods", Kind: "Pod", Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "1"}
	if err := s.Apply(ctx, "a", []searchv1alpha1.Object{pod}, nil); err != nil {
		t.Fatalf("Apply once the server is up (the schema is migrated then): %v", err)
	}
}

func TestBadDSN(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://user:secret@host:notaport/db")
	if err == nil {
		t.Fatal("no error")
	}
	if errors.Is(err, store.ErrUnavailable) || strings.Contains(err.Error(), "secret") {
		t.Errorf("error %q: want a bad-DSN error that does not print the password", err)
	}
}

// BenchmarkFleet: SEARCH_FLEET=1000x1000 go test -run '^$' -bench Fleet -benchtime 1x ./hub/search/store/postgres
func BenchmarkFleet(b *testing.B) {
	server := pgserver.New(b)
	storetest.BenchmarkFleet(b, "postgres", func(b *testing.B) store.Store {
		dsn, err := server.CreateDatabase(context.Background(), "fleet")
		if err != nil {
			b.Fatal(err)
		}
		s, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	server := pgserver.New(t)
	s := open(t, server)
	_ = s.Close()
	dsn := server.DSN(fmt.Sprintf("test%d", databases.Load()))
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "UPDATE search_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, dsn)
	if err == nil || errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("opening a database of schema version 99: %v, want an error naming the version", err)
	}
}
