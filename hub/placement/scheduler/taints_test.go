package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

func TestTolerates(t *testing.T) {
	taint := clusterv1.Taint{Key: "gpu", Value: "a100", Effect: clusterv1.TaintEffectNoSelect}
	tests := []struct {
		name string
		tol  clusterv1beta1.Toleration
		want bool
	}{
		{"Equal with key and value", clusterv1beta1.Toleration{Key: "gpu", Value: "a100"}, true},
		{"Equal with another value", clusterv1beta1.Toleration{Key: "gpu", Value: "t4"}, false},
		{"Equal without value does not match a valued taint", clusterv1beta1.Toleration{Key: "gpu"}, false},
		{"Exists with key", clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists}, true},
		{"Exists without key matches every taint", clusterv1beta1.Toleration{Operator: clusterv1beta1.TolerationOpExists}, true},
		{"another key", clusterv1beta1.Toleration{Key: "cpu", Operator: clusterv1beta1.TolerationOpExists}, false},
		{"matching effect", clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectNoSelect}, true},
		{"other effect", clusterv1beta1.Toleration{Key: "gpu", Operator: clusterv1beta1.TolerationOpExists, Effect: clusterv1.TaintEffectPreferNoSelect}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tolerates(tt.tol, taint); got != tt.want {
				t.Errorf("tolerates = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckTaints(t *testing.T) {
	added := now.Add(-time.Hour)
	taint := func(key string, effect clusterv1.TaintEffect) clusterv1.Taint {
		return clusterv1.Taint{Key: key, Effect: effect, TimeAdded: metav1.NewTime(added)}
	}
	exists := func(key string, seconds *int64) clusterv1beta1.Toleration {
		return clusterv1beta1.Toleration{Key: key, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: seconds}
	}
	tests := []struct {
		name         string
		taints       []clusterv1.Taint
		tolerations  []clusterv1beta1.Toleration
		chosen       bool
		wantExcluded string
		wantAvoid    int
		wantChanges  time.Time
	}{
		{name: "no taints", wantExcluded: ""},
		{name: "untolerated NoSelect excludes", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect)}, wantExcluded: "a"},
		{name: "untolerated NoSelect excludes a chosen cluster too", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect)}, chosen: true, wantExcluded: "a"},
		{name: "tolerated NoSelect", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect)},
			tolerations: []clusterv1beta1.Toleration{exists("a", nil)}},
		{name: "NoSelectIfNew excludes a new cluster", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelectIfNew)}, wantExcluded: "a"},
		{name: "NoSelectIfNew keeps a chosen cluster", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelectIfNew)}, chosen: true},
		{name: "PreferNoSelect only lowers", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectPreferNoSelect), taint("b", clusterv1.TaintEffectPreferNoSelect)}, wantAvoid: 2},
		{name: "tolerated PreferNoSelect", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectPreferNoSelect)},
			tolerations: []clusterv1beta1.Toleration{exists("a", nil)}},
		{name: "unknown effects are ignored", taints: []clusterv1.Taint{taint("a", "NoExecute")}},
		{name: "tolerationSeconds not yet over: tolerated until then", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect)},
			tolerations: []clusterv1beta1.Toleration{exists("a", ptr.To[int64](7200))}, wantChanges: added.Add(2 * time.Hour)},
		{name: "tolerationSeconds over: excluded", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect)},
			tolerations: []clusterv1beta1.Toleration{exists("a", ptr.To[int64](60))}, wantExcluded: "a"},
		{name: "a toleration without seconds wins over one with", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect)},
			tolerations: []clusterv1beta1.Toleration{exists("a", ptr.To[int64](7200)), exists("", nil)}},
		{name: "soonest expiry over several taints", taints: []clusterv1.Taint{taint("a", clusterv1.TaintEffectNoSelect), taint("b", clusterv1.TaintEffectPreferNoSelect)},
			tolerations: []clusterv1beta1.Toleration{exists("a", ptr.To[int64](7200)), exists("b", ptr.To[int64](5400))}, wantChanges: added.Add(90 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := checkTaints(tt.taints, tt.tolerations, tt.chosen, now)
			excluded := ""
			if v.excludedBy != nil {
				excluded = v.excludedBy.Key
			}
			if excluded != tt.wantExcluded || v.avoid != tt.wantAvoid || !v.changesAt.Equal(tt.wantChanges) {
				t.Errorf("got excluded by %q, avoid %d, changes at %v; want %q, %d, %v", excluded, v.avoid, v.changesAt, tt.wantExcluded, tt.wantAvoid, tt.wantChanges)
			}
		})
	}
}
