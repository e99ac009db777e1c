package services

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Config configures the services agent of one managed cluster.
type Config struct {
	// ClusterName is the managed cluster's name: its hub namespace and its
	// cluster ID in its cluster set.
	ClusterName string
	// Spoke reaches the managed cluster's API server.
	Spoke *rest.Config
	// SpokeMapper, when set, resolves the managed cluster's kinds.
	SpokeMapper meta.RESTMapper
}

// Agent carries one managed cluster's exports to the hub and its imports
// from it. Make one with New for the life of the process; Run it with each
// hub session.
type Agent struct {
	cfg Config
}

// New returns the services agent of cfg's cluster.
func New(cfg Config) (*Agent, error) {
	if cfg.ClusterName == "" || cfg.Spoke == nil {
		return nil, errors.New("services agent: the cluster name and the spoke's configuration are required")
	}
	return &Agent{cfg: cfg}, nil
}

// Run exports and imports over one hub session until ctx ends or either
// side fails. It first installs the MCS CRDs (ServiceExport,
// ServiceImport) on the managed cluster where they are missing or older,
// and returns the error if it cannot.
func (a *Agent) Run(ctx context.Context, hub *rest.Config) error {
	if err := installCRDs(ctx, a.cfg.Spoke); err != nil {
		return err
	}
	hubClient, err := client.NewWithWatch(hub, client.Options{Scheme: hubScheme, Mapper: hubMapper()})
	if err != nil {
		return fmt.Errorf("services agent: create the hub client: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// One watch of the cluster's set and its ImportedServices serves both
	// sides; each subscribes before it runs.
	sets := newClusterSet(a.cfg.ClusterName, hubClient)
	exp, err := a.newExporter(hub, sets)
	if err != nil {
		return err
	}
	im, err := a.newImporter(sets)
	if err != nil {
		return err
	}
	setsDone := make(chan struct{})
	go func() {
		defer close(setsDone)
		sets.run(ctx)
	}()
	errs := make(chan error, 2)
	go func() { errs <- exp.run(ctx, hub.Host) }()
	go func() { errs <- im.run(ctx) }()
	err = <-errs
	cancel()
	err = errors.Join(err, <-errs)
	<-setsDone
	return err
}
