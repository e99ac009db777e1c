package search

import (
	"context"
	"errors"

	"github.com/flotilla-io/flotilla/hub/search/store"
)

func openPostgres(ctx context.Context, dsn string) (store.Store, error) {
	return nil, errors.New("--search-database postgres://…: this hub is built without the PostgreSQL index")
}
