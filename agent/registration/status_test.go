package registration

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

func TestAvailableCondition(t *testing.T) {
	for _, tc := range []struct {
		name     string
		probeErr error
		want     metav1.Condition
	}{
		{name: "healthy", want: metav1.Condition{
			Type: "ManagedClusterConditionAvailable", Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "Managed cluster is available",
		}},
		{name: "unhealthy", probeErr: errors.New("/livez: etcd failed"), want: metav1.Condition{
			Type: "ManagedClusterConditionAvailable", Status: metav1.ConditionFalse, Reason: "ManagedClusterKubeAPIServerUnavailable",
			Message: "The kube-apiserver is not healthy: /livez: etcd failed",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(availableCondition(tc.probeErr)).To(Equal(tc.want))
		})
	}
}

func TestConditionsKeepTheirTransitionTimeWhileUnchanged(t *testing.T) {
	g := NewWithT(t)
	var conds []metav1.Condition
	meta.SetStatusCondition(&conds, availableCondition(nil))
	meta.SetStatusCondition(&conds, joinedCondition())
	before := append([]metav1.Condition(nil), conds...)

	meta.SetStatusCondition(&conds, availableCondition(nil))
	meta.SetStatusCondition(&conds, joinedCondition())
	g.Expect(conds).To(Equal(before), "an unchanged status must compare equal, so that nothing is written")

	meta.SetStatusCondition(&conds, availableCondition(errors.New("down")))
	g.Expect(meta.FindStatusCondition(conds, clusterv1.ManagedClusterConditionAvailable).Status).To(Equal(metav1.ConditionFalse))
}

// TestUnhealthySpokeIsLookedAtAgainSoon: a spoke API server that is
// starting fails /livez for a moment; the status controller reports it
// unavailable with the failing checks, once each, and returns an error,
// so that it looks again after a backoff instead of a lease period later.
func TestUnhealthySpokeIsLookedAtAgainSoon(t *testing.T) {
	g := NewWithT(t)
	const report = "[+]ping ok\n[+]etcd ok\n[-]poststarthook/start-apiextensions-controllers failed: reason withheld\n[-]poststarthook/crd-informer-synced failed: reason withheld\nlivez check failed\n"
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/livez" {
			http.NotFound(w, r)
			return
		}
		if !healthy.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, report)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	spoke, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	g.Expect(err).NotTo(HaveOccurred())
	c := &statusController{r: &Registration{cfg: Config{Spoke: spoke}}}

	mc := &clusterv1.ManagedCluster{}
	g.Expect(c.available(context.Background(), mc)).To(MatchError(ContainSubstring("not healthy")), "an unhealthy spoke must make the controller retry")
	cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Message).To(Equal("The kube-apiserver is not healthy: /livez: poststarthook/start-apiextensions-controllers failed: reason withheld; poststarthook/crd-informer-synced failed: reason withheld"))

	healthy.Store(true)
	g.Expect(c.available(context.Background(), mc)).To(Succeed())
	g.Expect(meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).To(BeTrue())
}
