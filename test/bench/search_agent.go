package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	agentsearch "github.com/flotilla-io/flotilla/agent/search"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/framework"
)

var searchAgentObjects = flag.Int("search-agent-objects", 6000, "search: objects (Pods, ConfigMaps, Secrets in equal parts) on the real spoke whose collector's memory is measured")

// startHubUnderTestArgs starts the release hub with args.
func startHubUnderTestArgs(ctx context.Context, e *env, dataDir string, args []string) (*hubUnderTest, error) {
	p, err := framework.StartHubProcess(ctx, e.binDir, dataDir, 2*time.Minute, args...)
	return &hubUnderTest{HubProcess: p}, err
}

// postgresDatabaseSize is the size of the search database.
func postgresDatabaseSize(ctx context.Context, dsn string) (int64, error) {
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	res := conn.ExecParams(ctx, "SELECT pg_database_size(current_database())", nil, nil, nil, nil).Read()
	if res.Err != nil {
		return 0, res.Err
	}
	var n int64
	_, err = fmt.Sscan(string(res.Rows[0][0]), &n)
	return n, err
}

// benchSearchAgentMemory measures the collector's heap per indexed object:
// agent/search's real code indexes a real spoke (flotilla-dev-cluster)
// into an endpoint in this process that acknowledges every batch (the
// hub is not what is measured here).
func benchSearchAgentMemory(ctx context.Context, e *env) error {
	spoke, err := startRealSpoke(ctx, e, "search-agent")
	if err != nil {
		return err
	}
	defer spoke.stop()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	if _, err := spoke.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	n := *searchAgentObjects / 3
	for i := range n {
		g.Go(func() error {
			labels := map[string]string{"app": fmt.Sprintf("app-%d", i%50), "tier": "front"}
			meta := metav1.ObjectMeta{Name: fmt.Sprintf("obj-%d", i), Namespace: "bench", Labels: labels}
			if _, err := spoke.kube.CoreV1().Pods("bench").Create(gctx, &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
				NodeName:   "unscheduled-" + fmt.Sprint(i%5),
				Containers: []corev1.Container{{Name: "app", Image: fmt.Sprintf("registry.example/team-%d/app-%d:v1", i%20, i%50)}},
			}}, metav1.CreateOptions{}); err != nil {
				return err
			}
			if _, err := spoke.kube.CoreV1().ConfigMaps("bench").Create(gctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"config": strings.Repeat("x", 512)}}, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := spoke.kube.CoreV1().Secrets("bench").Create(gctx, &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"key": []byte(strings.Repeat("s", 512))}}, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var acked atomic.Int64
	hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/changes"):
			var b searchv1alpha1.ChangeBatch
			if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, o := range b.Upserts {
				if o.Namespace == "bench" {
					acked.Add(1)
				}
			}
			_ = json.NewEncoder(w).Encode(searchv1alpha1.ChangeAck{Seq: b.Seq})
		case strings.HasSuffix(r.URL.Path, "/versions"):
			_ = json.NewEncoder(w).Encode(searchv1alpha1.ObjectVersions{Versions: nil})
		default:
			http.NotFound(w, r)
		}
	}))
	defer hubSrv.Close()

	before := heapAfterGC()
	a, err := agentsearch.New(agentsearch.Config{ClusterName: "search-agent", Spoke: spoke.cfg})
	if err != nil {
		return err
	}
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- a.Run(actx, &rest.Config{Host: hubSrv.URL}) }()
	defer func() { cancel(); <-done }()
	want := int64(3 * n)
	for acked.Load() < want {
		if time.Since(started) > 5*time.Minute {
			return fmt.Errorf("the collector indexed %d and sent %d of %d objects in 5 minutes", a.Indexed(), acked.Load(), want)
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	took := time.Since(started)
	after := heapAfterGC()
	row(fmt.Sprintf("agent: %d objects listed and sent (%d indexed with the spoke's own)", want, a.Indexed()), seconds(took), "")
	row("agent: heap per indexed object (collector, after GC)", fmt.Sprintf("%d B", (after-before)/a.Indexed()), "")
	return nil
}

func heapAfterGC() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
