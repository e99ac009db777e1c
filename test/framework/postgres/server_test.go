package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flotilla-io/flotilla/test/framework/postgres"
)

func TestStopAndStart(t *testing.T) {
	ctx := context.Background()
	s := postgres.New(t)
	dsn, err := s.CreateDatabase(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string) error {
		conn, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql).ReadAll()
		return err
	}
	if err := exec("CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if err := exec("SELECT 1"); err == nil {
		t.Fatal("a stopped server answered")
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exec("SELECT x FROM t"); err != nil {
		t.Errorf("after Start again, the data is gone: %v", err)
	}
}
