package registration

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
