package render_test

import (
	"fmt"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/render"
)

// Three replicas over two clusters weighted 2:1.
func ExampleDivide() {
	div := &workv1alpha1.ReplicaDivision{Weights: []workv1alpha1.ClusterWeight{
		{ClusterNames: []string{"eu-1"}, Weight: 2},
		{ClusterNames: []string{"us-1"}, Weight: 1},
	}}
	counts, err := render.Divide(div, 3, []render.Cluster{{Name: "eu-1"}, {Name: "us-1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(counts["eu-1"], counts["us-1"])
	// Output: 2 1
}
