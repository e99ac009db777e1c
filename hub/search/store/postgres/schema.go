package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations[i] takes the schema from version i to i+1.
var migrations = []string{
	`CREATE EXTENSION IF NOT EXISTS pg_trgm;
	CREATE TABLE objects (
		id bigserial PRIMARY KEY,
		cluster text COLLATE "C" NOT NULL,
		uid text COLLATE "C" NOT NULL,
		grp text NOT NULL,
		resource text NOT NULL,
		kind text NOT NULL,
		namespace text COLLATE "C" NOT NULL,
		name text COLLATE "C" NOT NULL,
		name_lc text COLLATE "C" NOT NULL,
		rv text NOT NULL,
		status text NOT NULL,
		owner_kind text NOT NULL,
		owner_name text NOT NULL,
		data bytea NOT NULL
	);
	CREATE UNIQUE INDEX objects_uid ON objects (cluster, uid);
	CREATE UNIQUE INDEX objects_order ON objects (cluster, namespace, name, uid);
	CREATE INDEX objects_resource ON objects (cluster, grp, resource);
	CREATE INDEX objects_name ON objects (name);
	CREATE INDEX objects_name_trgm ON objects USING gin (name_lc gin_trgm_ops);
	CREATE INDEX objects_status ON objects (status);
	CREATE INDEX objects_owner ON objects (owner_name);
	CREATE TABLE labels (
		id bigint NOT NULL,
		key text COLLATE "C" NOT NULL,
		value text COLLATE "C" NOT NULL,
		PRIMARY KEY (key, value, id)
	);
	CREATE INDEX labels_id ON labels (id);
	CREATE TABLE fields (
		id bigint NOT NULL,
		path text COLLATE "C" NOT NULL,
		value text COLLATE "C" NOT NULL,
		PRIMARY KEY (path, value, id)
	);
	CREATE INDEX fields_id ON fields (id);
	CREATE TABLE images (
		id bigint NOT NULL,
		image text COLLATE "C" NOT NULL
	);
	CREATE INDEX images_id ON images (id);
	CREATE INDEX images_trgm ON images USING gin (image gin_trgm_ops);`,
}

// migrate brings the database's schema to the newest version, one hub at
// a time.
func migrate(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(4747)"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS search_schema (version int NOT NULL)"); err != nil {
		return err
	}
	var version int
	err := tx.QueryRow(ctx, "SELECT version FROM search_schema").Scan(&version)
	switch {
	case err == pgx.ErrNoRows:
		if _, err := tx.Exec(ctx, "INSERT INTO search_schema VALUES (0)"); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("the search index has schema version %d, newer than this hub's %d: run a newer hub", version, len(migrations))
	}
	for ; version < len(migrations); version++ {
		if _, err := tx.Exec(ctx, migrations[version]); err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", version+1, err)
		}
	}
	_, err = tx.Exec(ctx, "UPDATE search_schema SET version = $1", version)
	return err
}
