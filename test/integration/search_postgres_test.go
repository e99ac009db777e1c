package integration

import (
	"context"
	"fmt"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flotilla-io/flotilla/hub/search/store"
	pgstore "github.com/flotilla-io/flotilla/hub/search/store/postgres"
	"github.com/flotilla-io/flotilla/test/framework/postgres"
)

// postgresBackend is a real PostgreSQL server started for the specs; its
// outage is the server stopped and started again.
var postgresBackend = func() searchBackend {
	var server *postgres.Server
	var n atomic.Int32
	return searchBackend{
		name: "a PostgreSQL index",
		open: func(ctx context.Context) store.Store {
			GinkgoHelper()
			if server == nil {
				server = postgres.New(GinkgoT())
			}
			dsn, err := server.CreateDatabase(ctx, fmt.Sprintf("search%d", n.Add(1)))
			Expect(err).NotTo(HaveOccurred())
			s, err := pgstore.Open(ctx, dsn)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(s.Close)
			return s
		},
		outage: func(ctx context.Context) func() {
			server.Stop()
			return func() { Expect(server.Start(ctx)).To(Succeed()) }
		},
	}
}()

var _ = Describe("Search index (PostgreSQL)", Ordered, func() { searchSpecs(postgresBackend) })
