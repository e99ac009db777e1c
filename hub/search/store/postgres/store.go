package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/search/store"
	"github.com/flotilla-io/flotilla/hub/search/store/internal/sqlq"
)

// Store is the search index in a PostgreSQL database.
type Store struct {
	pool *pgxpool.Pool
	host string

	mu       sync.Mutex
	migrated bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string) and migrates its schema. A server that does not answer yet is no
// error: the store migrates on its first use once it does.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the DSN with its password masked.
		return nil, fmt.Errorf("search database: the DSN does not parse (want postgres://user:password@host:5432/database?sslmode=...): %v", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("search database: %w", err)
	}
	s := &Store{pool: pool, host: cfg.ConnConfig.Host + ":" + strconv.Itoa(int(cfg.ConnConfig.Port))}
	if err := s.ready(ctx); err != nil && !errors.Is(err, store.ErrUnavailable) {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// ready migrates the schema once.
func (s *Store) ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.migrated {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return migrate(ctx, tx) })
	if err != nil {
		return s.wrap(err)
	}
	s.migrated = true
	return nil
}

// Apply implements store.Store.
func (s *Store) Apply(ctx context.Context, cluster string, upserts []searchv1alpha1.Object, deletes []searchv1alpha1.ObjectRef) error {
	rows := make([]sqlq.Row, len(upserts))
	for i := range upserts {
		o := &upserts[i]
		if err := sqlq.CheckUpsert(cluster, i, string(o.UID), o.Resource, o.Name); err != nil {
			return err
		}
		row, err := sqlq.Flatten(o)
		if err != nil {
			return err
		}
		rows[i] = row
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.wrap(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := upsert(ctx, tx, cluster, rows); err != nil {
			return err
		}
		return deleteUIDs(ctx, tx, cluster, deletes)
	}))
}

type held struct {
	id int64
	rv string
}

// upsert writes the rows newer than the ones held, in a few round trips:
// one to lock what is held, one for the objects, one copy per side table.
func upsert(ctx context.Context, tx pgx.Tx, cluster string, rows []sqlq.Row) error {
	if len(rows) == 0 {
		return nil
	}
	uids := make([]string, len(rows))
	for i, r := range rows {
		uids[i] = r.UID
	}
	current := map[string]held{}
	res, err := tx.Query(ctx, "SELECT uid, id, rv FROM objects WHERE cluster = $1 AND uid = ANY($2) FOR UPDATE", cluster, uids)
	if err != nil {
		return err
	}
	for res.Next() {
		var uid string
		var h held
		if err := res.Scan(&uid, &h.id, &h.rv); err != nil {
			return err
		}
		current[uid] = h
	}
	if err := res.Err(); err != nil {
		return err
	}
	// The newest row of each UID that is newer than the one held.
	pending := map[string]int{}
	var order []string
	for i, r := range rows {
		if h, ok := current[r.UID]; ok && !sqlq.Newer(h.rv, r.RV) {
			continue
		}
		if j, ok := pending[r.UID]; ok && !sqlq.Newer(rows[j].RV, r.RV) {
			continue
		}
		if _, ok := pending[r.UID]; !ok {
			order = append(order, r.UID)
		}
		pending[r.UID] = i
		current[r.UID] = held{id: current[r.UID].id, rv: r.RV}
	}
	if len(order) == 0 {
		return nil
	}
	var stale []int64
	for _, uid := range order {
		if id := current[uid].id; id != 0 {
			stale = append(stale, id)
		}
	}
	if err := clearSide(ctx, tx, stale); err != nil {
		return err
	}
	batch := &pgx.Batch{}
	for _, uid := range order {
		r := rows[pending[uid]]
		batch.Queue(`INSERT INTO objects (cluster, uid, grp, resource, kind, namespace, name, name_lc, rv, status, owner_kind, owner_name, data)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
			ON CONFLICT (cluster, uid) DO UPDATE SET grp = excluded.grp, resource = excluded.resource, kind = excluded.kind,
				namespace = excluded.namespace, name = excluded.name, name_lc = excluded.name_lc, rv = excluded.rv,
				status = excluded.status, owner_kind = excluded.owner_kind, owner_name = excluded.owner_name, data = excluded.data
			RETURNING id`,
			cluster, r.UID, r.Group, r.Resource, r.Kind, r.Namespace, r.Name, strings.ToLower(r.Name), r.RV, r.Status, r.OwnerKind, r.OwnerName, r.Data)
	}
	results := tx.SendBatch(ctx, batch)
	ids := make([]int64, len(order))
	for i := range order {
		if err := results.QueryRow().Scan(&ids[i]); err != nil {
			_ = results.Close()
			return err
		}
	}
	if err := results.Close(); err != nil {
		return err
	}
	var labels, fields, images [][]any
	for i, uid := range order {
		r := rows[pending[uid]]
		for k, v := range r.Labels {
			labels = append(labels, []any{ids[i], k, v})
		}
		for k, v := range r.Fields {
			fields = append(fields, []any{ids[i], k, v})
		}
		for _, image := range r.Images {
			images = append(images, []any{ids[i], image})
		}
	}
	for _, c := range []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"labels", []string{"id", "key", "value"}, labels},
		{"fields", []string{"id", "path", "value"}, fields},
		{"images", []string{"id", "image"}, images},
	} {
		if len(c.rows) == 0 {
			continue
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, pgx.CopyFromRows(c.rows)); err != nil {
			return err
		}
	}
	return nil
}

// clearSide deletes objects' rows in the side tables.
func clearSide(ctx context.Context, tx pgx.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	for _, table := range []string{"labels", "fields", "images"} {
		if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE id = ANY($1)", ids); err != nil {
			return err
		}
	}
	return nil
}

func deleteUIDs(ctx context.Context, tx pgx.Tx, cluster string, refs []searchv1alpha1.ObjectRef) error {
	if len(refs) == 0 {
		return nil
	}
	uids := make([]string, len(refs))
	for i, ref := range refs {
		uids[i] = string(ref.UID)
	}
	res, err := tx.Query(ctx, "DELETE FROM objects WHERE cluster = $1 AND uid = ANY($2) RETURNING id", cluster, uids)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(res, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	return clearSide(ctx, tx, ids)
}

// Versions implements store.Store.
func (s *Store) Versions(ctx context.Context, cluster string, gr schema.GroupResource) (map[types.UID]string, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, "SELECT uid, rv FROM objects WHERE cluster = $1 AND grp = $2 AND resource = $3", cluster, gr.Group, gr.Resource)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	return sqlq.ReadMap[types.UID, string](rows, s.wrap)
}

// DeleteCluster implements store.Store.
func (s *Store) DeleteCluster(ctx context.Context, cluster string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.wrap(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, table := range []string{"labels", "fields", "images"} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE id IN (SELECT id FROM objects WHERE cluster = $1)", cluster); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "DELETE FROM objects WHERE cluster = $1", cluster)
		return err
	}))
}

// Clusters implements store.Store.
func (s *Store) Clusters(ctx context.Context) (map[string]int64, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, "SELECT cluster, count(*) FROM objects GROUP BY cluster")
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	return sqlq.ReadMap[string, int64](rows, s.wrap)
}

// dialect is PostgreSQL's: substrings with LIKE, which pg_trgm's indexes
// answer.
var dialect = sqlq.Dialect{
	Placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
	NameContains: func(b *sqlq.Builder, s string) string {
		return "o.name_lc LIKE " + b.Arg("%"+likeEscape(s)+"%")
	},
	ImageContains: func(b *sqlq.Builder, s string) string {
		return "o.id IN (SELECT i.id FROM images i WHERE i.image LIKE " + b.Arg("%"+likeEscape(s)+"%") + ")"
	},
}

// likeEscape makes LIKE's special characters match themselves (its
// escape character is a backslash).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

// Query implements store.Store.
func (s *Store) Query(ctx context.Context, q store.Query) (store.Page, error) {
	sel, err := sqlq.Build(dialect, q)
	if err != nil || sel.Empty {
		return store.Page{}, err
	}
	if err := s.ready(ctx); err != nil {
		return store.Page{}, err
	}
	rows, err := s.pool.Query(ctx, sel.SQL, sel.Args...)
	if err != nil {
		return store.Page{}, s.wrap(err)
	}
	defer rows.Close()
	return sqlq.ReadPage(rows, sel.Limit, s.wrap)
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error {
	return s.wrap(s.pool.Ping(ctx))
}

// Size returns the bytes the database holds.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var size int64
	err := s.pool.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&size)
	return size, s.wrap(err)
}

// Close implements store.Store.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// wrap makes the errors of a server that does not answer wrap
// store.ErrUnavailable; the server's own answers (a statement it refused)
// and the store's own errors do not.
func (s *Store) wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return err
	case unavailable(err):
		return fmt.Errorf("%w: PostgreSQL at %s: %w", store.ErrUnavailable, s.host, err)
	}
	return fmt.Errorf("search database at %s: %w", s.host, err)
}

func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			strings.HasPrefix(pgErr.Code, "53") || // insufficient resources
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || // shutting down, starting
			pgErr.Code == "40001" || pgErr.Code == "40P01" // serialization failure, deadlock: try again
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		// A connection pgx closed after a network error.
		strings.Contains(err.Error(), "conn closed")
}
