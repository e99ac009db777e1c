package storetest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/flotilla-io/flotilla/hub/search/store"
)

// BenchmarkFleet loads the synthetic fleet into the store open returns,
// times queries and prints the figures; run it once (-benchtime 1x). The
// fleet is $SEARCH_FLEET, <clusters>x<objects per cluster> (20x1000 without
// it), and $SEARCH_FLEET_QUERIES the queries of each kind (100). It
// reports label-p99-ms, name-p99-ms, image-p99-ms, objects/s and
// bytes/object.
func BenchmarkFleet(b *testing.B, name string, open func(b *testing.B) store.Store) {
	fleet := cmp.Or(os.Getenv("SEARCH_FLEET"), "20x1000")
	var clusters, perCluster int
	if _, err := fmt.Sscanf(fleet, "%dx%d", &clusters, &perCluster); err != nil || clusters < 1 || perCluster < 10 {
		b.Fatalf("SEARCH_FLEET=%q: want <clusters>x<objects per cluster>, e.g. 1000x1000 (at least 10 objects)", fleet)
	}
	queries, err := strconv.Atoi(cmp.Or(os.Getenv("SEARCH_FLEET_QUERIES"), "100"))
	if err != nil || queries < 1 {
		b.Fatalf("SEARCH_FLEET_QUERIES=%q: want a number of queries", os.Getenv("SEARCH_FLEET_QUERIES"))
	}
	ctx := context.Background()
	s := open(b)
	l, err := Load(ctx, s, clusters, perCluster)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	m, err := Measure(ctx, s, clusters, perCluster, queries)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	Print(os.Stdout, name, l, m)
	b.ReportMetric(l.Rate(), "objects/s")
	for i, unit := range []string{"label-p99-ms", "name-p99-ms", "image-p99-ms"} {
		b.ReportMetric(ms(m.Queries[i].Quantile(0.99)), unit)
	}
	if m.Objects > 0 {
		b.ReportMetric(float64(m.Bytes)/float64(m.Objects), "bytes/object")
	}
}
