package search

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestTable(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	items := []searchv1alpha1.SearchItem{
		{Cluster: "cluster1", Object: searchv1alpha1.Object{Kind: "Pod", Namespace: "shop", Name: "web-1", Status: "CrashLoopBackOff",
			CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute)), Images: []string{"nginx:1.27", "envoy:1.30"},
			Owner: &searchv1alpha1.Owner{Kind: "ReplicaSet", Name: "web-5d4f"}, Labels: map[string]string{"tier": "front", "app": "web"}}},
		{Cluster: "cluster2", Object: searchv1alpha1.Object{Kind: "Node", Name: "node-a"}},
	}
	for _, tc := range []struct {
		wide bool
		want string
	}{
		{false, "" +
			"CLUSTER    NAMESPACE   NAME     KIND   STATUS             AGE\n" +
			"cluster1   shop        web-1    Pod    CrashLoopBackOff   90m\n" +
			"cluster2   -           node-a   Node   -                  -\n"},
		{true, "" +
			"CLUSTER    NAMESPACE   NAME     KIND   STATUS             AGE   IMAGES                  OWNER                 LABELS\n" +
			"cluster1   shop        web-1    Pod    CrashLoopBackOff   90m   nginx:1.27,envoy:1.30   ReplicaSet/web-5d4f   app=web,tier=front\n" +
			"cluster2   -           node-a   Node   -                  -     -                       -                     -\n"},
	} {
		header, rows := Table(items, tc.wide, now)
		var out bytes.Buffer
		if err := cmdutil.PrintTable(&out, header, rows); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("wide=%v:\n%s\nwant:\n%s", tc.wide, out.String(), tc.want)
		}
	}
}
