package services

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Setup adds the services controllers to the hub manager.
func Setup(mgr manager.Manager) error {
	merge := &MergeReconciler{Client: mgr.GetClient()}
	if err := merge.SetupWithManager(context.Background(), mgr); err != nil {
		return fmt.Errorf("set up the multi-cluster services merge controller: %w", err)
	}
	sets := &SetReconciler{Client: mgr.GetClient()}
	if err := sets.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the multi-cluster services cluster set controller: %w", err)
	}
	return nil
}
