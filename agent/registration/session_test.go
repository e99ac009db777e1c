package registration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

// hubAnswering serves GET of ManagedCluster c1 with the statuses in turn
// (the last one from then on), and counts the requests.
func hubAnswering(t *testing.T, statuses ...int) (*session, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := int(calls.Add(1))
		if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/managedclusters/c1") {
			t.Errorf("unexpected request %s %s", req.Method, req.URL.Path)
		}
		code := statuses[min(n, len(statuses))-1]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		var body any = &clusterv1.ManagedCluster{TypeMeta: managedClusterType,
			ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
		gr := schema.GroupResource{Group: clusterv1.GroupVersion.Group, Resource: "managedclusters"}
		switch code {
		case http.StatusForbidden:
			body = apierrors.NewForbidden(gr, "c1", nil).Status()
		case http.StatusUnauthorized:
			body = apierrors.NewUnauthorized("certificate rejected").Status()
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	c, err := newHubClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{client: c}
	s.creds.Store(&Credentials{ClusterName: "c1", Hub: &clientcmdapi.Cluster{Server: srv.URL}})
	return s, &calls
}

// TestWaitAccepted checks that a session waits, asking the hub only for
// its ManagedCluster, until the hub lets the agent read it, and gives up
// on a certificate the hub rejects.
func TestWaitAccepted(t *testing.T) {
	r := &Registration{cfg: Config{ClusterName: "c1"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, tc := range []struct {
		name     string
		statuses []int
		// rejected says the wait must end with the hub's rejection.
		rejected bool
		calls    int32
	}{
		{"forbidden until accepted", []int{http.StatusForbidden, http.StatusForbidden, http.StatusOK}, false, 3},
		{"not found counts as accepted", []int{http.StatusNotFound}, false, 1},
		{"a rejected certificate ends the wait", []int{http.StatusUnauthorized}, true, maxRejections},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, calls := hubAnswering(t, tc.statuses...)
			err := r.waitAccepted(ctx, s)
			if tc.rejected != (err != nil) || err != nil && !apierrors.IsUnauthorized(err) {
				t.Fatalf("got %v, want rejected %t", err, tc.rejected)
			}
			if n := calls.Load(); n != tc.calls {
				t.Errorf("asked the hub %d times, want %d", n, tc.calls)
			}
		})
	}
}
