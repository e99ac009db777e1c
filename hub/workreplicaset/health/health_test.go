package health

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func intValue(name string, v int64) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)}}
}

func stringValue(name, v string) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v)}}
}

func boolValue(name string, v bool) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(v)}}
}

func rawValue(name, v string) workv1.FeedbackValue {
	return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(v)}}
}

var (
	webMeta   = workv1.ManifestResourceMeta{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "web"}
	cacheMeta = workv1.ManifestResourceMeta{Ordinal: 1, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "cache"}
	cmMeta    = workv1.ManifestResourceMeta{Ordinal: 2, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "conf"}
)

// manifest is a manifest's status with these feedback values.
func manifest(rm workv1.ManifestResourceMeta, values ...workv1.FeedbackValue) workv1.ManifestCondition {
	mc := workv1.ManifestCondition{ResourceMeta: rm, StatusFeedback: workv1.StatusFeedbackResult{Values: values}}
	if len(values) > 0 {
		mc.Conditions = []metav1.Condition{{Type: workv1.ManifestStatusFeedbackSynced, Status: metav1.ConditionTrue, Reason: workv1.ReasonStatusFeedbackSynced}}
	}
	return mc
}

// work is a ManifestWork of generation 2 whose agent reported for
// generation observed.
func work(observed int64, manifests ...workv1.ManifestCondition) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "web", Generation: 2}}
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: "ResourcesAvailable", ObservedGeneration: observed}}
	w.Status.ResourceStatus.Manifests = manifests
	return w
}

// fullyUp is a Deployment at full capacity, as WellKnownStatus and a
// JSONPaths rule for updatedReplicas report it.
func fullyUp(rm workv1.ManifestResourceMeta) workv1.ManifestCondition {
	return manifest(rm, intValue("ReadyReplicas", 3), intValue("Replicas", 3), intValue("AvailableReplicas", 3), intValue("updatedReplicas", 3))
}

func halfUp(rm workv1.ManifestResourceMeta) workv1.ManifestCondition {
	return manifest(rm, intValue("ReadyReplicas", 1), intValue("Replicas", 3), intValue("AvailableReplicas", 1), intValue("updatedReplicas", 3))
}

var capacity = []workv1alpha1.FeedbackCheck{
	{Name: "AvailableReplicas", EqualsValue: "Replicas"},
	{Name: "updatedReplicas", EqualsValue: "Replicas"},
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		hc   *workv1alpha1.HealthCheck
		work *workv1.ManifestWork
		// want is "" for healthy, else words the message must contain.
		want []string
	}{
		{name: "no health check", hc: nil, work: work(1)},
		{name: "feedback at full capacity", hc: &workv1alpha1.HealthCheck{Feedback: capacity}, work: work(2, fullyUp(webMeta))},
		{name: "half capacity fails equalsValue", hc: &workv1alpha1.HealthCheck{Feedback: capacity}, work: work(2, halfUp(webMeta)),
			want: []string{"Deployment default/web", "AvailableReplicas is 1, Replicas is 3"}},
		{name: "stale feedback of the previous generation", hc: &workv1alpha1.HealthCheck{Feedback: capacity}, work: work(1, fullyUp(webMeta)),
			want: []string{"generation 2", "for generation 1"}},
		{name: "no Available condition yet", hc: &workv1alpha1.HealthCheck{Feedback: capacity}, work: func() *workv1.ManifestWork {
			w := work(2, fullyUp(webMeta))
			w.Status.Conditions = nil
			return w
		}(), want: []string{"not reported", "generation 2"}},
		{name: "a value not reported", hc: &workv1alpha1.HealthCheck{Feedback: capacity},
			work: work(2, manifest(webMeta, intValue("Replicas", 3), intValue("AvailableReplicas", 3))),
			want: []string{"Deployment default/web", "reports no value updatedReplicas", "AvailableReplicas, Replicas"}},
		{name: "a value named in the wrong case", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "availableReplicas", EqualsValue: "Replicas"}}},
			work: work(2, fullyUp(webMeta)), want: []string{"case-sensitive", "did you mean AvailableReplicas?"}},
		{name: "the value compared with is not reported", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "AvailableReplicas", EqualsValue: "desired"}}},
			work: work(2, fullyUp(webMeta)), want: []string{"reports no value desired"}},
		{name: "no feedback yet, with the agent's reason", hc: &workv1alpha1.HealthCheck{Feedback: capacity, Target: &workv1alpha1.ManifestSelector{Kind: "Deployment"}},
			work: work(2, workv1.ManifestCondition{ResourceMeta: webMeta, Conditions: []metav1.Condition{{
				Type: workv1.ManifestStatusFeedbackSynced, Status: metav1.ConditionTrue, Reason: workv1.ReasonNoStatusFeedbackSynced, Message: "No status value is set yet"}}}),
			want: []string{"Deployment default/web: reports no status feedback yet (No status value is set yet)"}},
		{name: "integer literal", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "Replicas", Equals: "3"}}}, work: work(2, fullyUp(webMeta))},
		{name: "integer literal differs", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "Replicas", Equals: "4"}}}, work: work(2, fullyUp(webMeta)),
			want: []string{"Replicas is 3, not 4"}},
		{name: "string literal", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "PodPhase", Equals: "Running"}}},
			work: work(2, manifest(webMeta, stringValue("PodPhase", "Running")))},
		{name: "string literal differs", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "PodPhase", Equals: "Running"}}},
			work: work(2, manifest(webMeta, stringValue("PodPhase", "Pending"))), want: []string{"PodPhase is Pending, not Running"}},
		{name: "boolean literal in any case", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "ready", Equals: "True"}}},
			work: work(2, manifest(webMeta, boolValue("ready", true)))},
		{name: "boolean literal differs", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "ready", Equals: "true"}}},
			work: work(2, manifest(webMeta, boolValue("ready", false))), want: []string{"ready is false, not true"}},
		{name: "JsonRaw literal compared as JSON", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "images", Equals: `{"web": "nginx:1.28", "n": 2}`}}},
			work: work(2, manifest(webMeta, rawValue("images", `{"n":2,"web":"nginx:1.28"}`)))},
		{name: "JsonRaw values compared as JSON", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "want", EqualsValue: "got"}}},
			work: work(2, manifest(webMeta, rawValue("want", `[1, 2]`), rawValue("got", `[1,2]`)))},
		{name: "JsonRaw values differ", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "want", EqualsValue: "got"}}},
			work: work(2, manifest(webMeta, rawValue("want", `[1,2]`), rawValue("got", `[1]`))), want: []string{"want is [1,2], got is [1]"}},
		{name: "a JsonRaw value that is not JSON", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "raw", Equals: "{}"}}},
			work: work(2, manifest(webMeta, rawValue("raw", `{`))), want: []string{"raw: reported JsonRaw value is not JSON"}},
		{name: "a value without its field", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "x", Equals: "1"}}},
			work: work(2, manifest(webMeta, workv1.FeedbackValue{Name: "x", Value: workv1.FieldValue{Type: workv1.Integer}})),
			want: []string{`x: reported as type "Integer" without a value`}},
		{name: "expression at full capacity",
			hc:   &workv1alpha1.HealthCheck{Expression: "values.AvailableReplicas == values.Replicas && values.updatedReplicas == values.Replicas"},
			work: work(2, fullyUp(webMeta))},
		{name: "expression false at half capacity",
			hc:   &workv1alpha1.HealthCheck{Expression: "values.AvailableReplicas == values.Replicas"},
			work: work(2, halfUp(webMeta)), want: []string{"Deployment default/web", "is false", "AvailableReplicas=1", "Replicas=3"}},
		{name: "expression over every value type",
			hc: &workv1alpha1.HealthCheck{Expression: `values.n == 3 && values.phase == "Running" && values.ok && values.raw.pods[1].ready && values.raw.ratio > 0.5 && size(values.raw.pods) == values.n - 1`},
			work: work(2, manifest(webMeta, intValue("n", 3), stringValue("phase", "Running"), boolValue("ok", true),
				rawValue("raw", `{"pods":[{"ready":false},{"ready":true}],"ratio":0.75}`)))},
		{name: "expression over the manifest variable",
			hc:   &workv1alpha1.HealthCheck{Expression: `manifest.kind != "Deployment" || manifest.name != "web" || values.Replicas == 3`},
			work: work(2, fullyUp(webMeta), manifest(cacheMeta, intValue("Replicas", 1)))},
		{name: "expression false for the second manifest names it",
			hc:   &workv1alpha1.HealthCheck{Expression: `manifest.group == "apps" && manifest.version == "v1" && manifest.resource == "deployments" && manifest.namespace == "default" && values.Replicas == 3`},
			work: work(2, fullyUp(webMeta), manifest(cacheMeta, intValue("Replicas", 1))), want: []string{"Deployment default/cache", "is false"}},
		{name: "runtime error of a missing key",
			hc:   &workv1alpha1.HealthCheck{Expression: "values.updatedReplicas == values.Replicas"},
			work: work(2, manifest(webMeta, intValue("Replicas", 3))), want: []string{"Deployment default/web", "failed", "no such key: updatedReplicas"}},
		{name: "an optional value that is missing",
			hc:   &workv1alpha1.HealthCheck{Expression: "values.?updatedReplicas.orValue(0) == values.Replicas"},
			work: work(2, manifest(webMeta, intValue("Replicas", 3))), want: []string{"is false"}},
		{name: "expression that yields no bool at run time",
			hc:   &workv1alpha1.HealthCheck{Expression: "values.phase"},
			work: work(2, manifest(webMeta, stringValue("phase", "Running"))), want: []string{"not a bool"}},
		{name: "expression that does not compile",
			hc:   &workv1alpha1.HealthCheck{Expression: "values.Replicas =="},
			work: work(2, fullyUp(webMeta)), want: []string{`the health check's expression "values.Replicas ==" does not compile`}},
		{name: "target picks one manifest",
			hc:   &workv1alpha1.HealthCheck{Feedback: capacity, Target: &workv1alpha1.ManifestSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}},
			work: work(2, fullyUp(webMeta), halfUp(cacheMeta))},
		{name: "no target checks every manifest with feedback",
			hc:   &workv1alpha1.HealthCheck{Feedback: capacity},
			work: work(2, manifest(cmMeta), fullyUp(webMeta), halfUp(cacheMeta)), want: []string{"Deployment default/cache"}},
		{name: "no target skips manifests without feedback",
			hc:   &workv1alpha1.HealthCheck{Feedback: capacity},
			work: work(2, manifest(cmMeta), fullyUp(webMeta))},
		{name: "no target: a manifest whose feedback the template asks for is checked before it reports",
			hc: &workv1alpha1.HealthCheck{Feedback: capacity},
			work: func() *workv1.ManifestWork {
				w := work(2, manifest(cmMeta), fullyUp(webMeta), manifest(cacheMeta))
				w.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
					ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: "cache"},
					FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
				}}
				return w
			}(), want: []string{"Deployment default/cache: reports no status feedback yet"}},
		{name: "target by apiVersion of the core group", hc: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{{Name: "x", Equals: "1"}}, Target: &workv1alpha1.ManifestSelector{APIVersion: "v1"}},
			work: work(2, fullyUp(webMeta), manifest(cmMeta, intValue("x", 1)))},
		{name: "a target no manifest matches", hc: &workv1alpha1.HealthCheck{Feedback: capacity, Target: &workv1alpha1.ManifestSelector{Kind: "StatefulSet", Name: "db"}},
			work: work(2, fullyUp(webMeta)), want: []string{"no manifest", "kind=StatefulSet, name=db"}},
		{name: "a target manifest without feedback", hc: &workv1alpha1.HealthCheck{Feedback: capacity, Target: &workv1alpha1.ManifestSelector{Kind: "ConfigMap"}},
			work: work(2, manifest(cmMeta)), want: []string{"ConfigMap default/conf: reports no status feedback yet"}},
		{name: "no manifest with feedback at all", hc: &workv1alpha1.HealthCheck{Feedback: capacity},
			work: work(2, manifest(cmMeta)), want: []string{"no manifest reports status feedback", "feedbackRules"}},
	}
	c := NewChecker()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Check(tt.hc, tt.work)
			if len(tt.want) == 0 {
				if !got.Healthy {
					t.Fatalf("Check() = not healthy (%s), want healthy", got.Message)
				}
				return
			}
			if got.Healthy {
				t.Fatalf("Check() = healthy, want not healthy with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("Check() message %q does not say %q", got.Message, w)
				}
			}
		})
	}
}

func TestCompileCache(t *testing.T) {
	c := NewChecker()
	const expr = "values.Replicas == 3"
	first, err := c.compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.compile(expr)
	if first != again {
		t.Error("the second compile of one expression made a new program")
	}
	_, err1 := c.compile("values. ==")
	_, err2 := c.compile("values. ==")
	if err1 == nil || err1 != err2 {
		t.Errorf("a bad expression's error is not kept: %v, %v", err1, err2)
	}
	for i := range cacheSize + 1 {
		if _, err := c.compile("values.Replicas == " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.programs); n > cacheSize {
		t.Errorf("the cache holds %d programs, over its bound %d", n, cacheSize)
	}
}

func TestCostLimit(t *testing.T) {
	c := NewChecker()
	// Quadratic in the size of a 1 KiB JsonRaw list: far over the cost limit.
	hc := &workv1alpha1.HealthCheck{Expression: "values.l.all(x, values.l.all(y, values.l.all(z, x + y + z >= 0)))"}
	list := "[" + strings.Repeat("1,", 300) + "1]"
	got := c.Check(hc, work(2, manifest(webMeta, rawValue("l", list))))
	if got.Healthy || !strings.Contains(got.Message, "cost limit exceeded") {
		t.Fatalf("Check() = %+v, want not healthy over the cost limit", got)
	}
	if len(got.Message) > 1024 {
		t.Errorf("the message is %d bytes: the values it lists are not shortened", len(got.Message))
	}
}

func TestConcurrentUse(t *testing.T) {
	c := NewChecker()
	hc := &workv1alpha1.HealthCheck{Feedback: capacity, Expression: "values.AvailableReplicas == values.Replicas"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := work(2, fullyUp(webMeta))
			if i%2 == 1 {
				w = work(2, halfUp(webMeta))
			}
			for range 50 {
				if got := c.Check(hc, w); got.Healthy != (i%2 == 0) {
					t.Errorf("Check() = %+v", got)
					return
				}
			}
		}()
	}
	wg.Wait()
}
