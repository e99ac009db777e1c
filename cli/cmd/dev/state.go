package dev

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// devStateFile is the name of a dev environment's state file in its directory.
const devStateFile = "state.json"

// devState is what `flotilla dev up` records in its directory, so that
// `dev status` and `dev down` find the processes again.
type devState struct {
	// Created is when `dev up` started.
	Created time.Time `json:"created"`
	// Ready is when everything was up; zero while starting, or if it failed.
	Ready time.Time `json:"ready,omitempty"`
	// Hub is the hub.
	Hub devHub `json:"hub"`
	// Clusters are the managed clusters, in order.
	Clusters []devCluster `json:"clusters"`
}

// devHub is the hub of a dev environment.
type devHub struct {
	// Process is the flotilla-hub process.
	Process *devProcess `json:"process,omitempty"`
	// URL is the hub API server's address.
	URL string `json:"url"`
	// Kubeconfig is the hub's admin kubeconfig.
	Kubeconfig string `json:"kubeconfig"`
}

// devCluster is a managed cluster of a dev environment: a dev cluster and
// the agent that joined it to the hub.
type devCluster struct {
	// Name is the cluster's name on the hub.
	Name string `json:"name"`
	// Labels are the ManagedCluster's labels on the hub.
	Labels map[string]string `json:"labels"`
	// URL is the cluster's API server address.
	URL string `json:"url"`
	// Kubeconfig is the cluster's admin kubeconfig.
	Kubeconfig string `json:"kubeconfig"`
	// Process is the flotilla-dev-cluster process.
	Process *devProcess `json:"process,omitempty"`
	// Agent is the agent process (flotilla join --run).
	Agent *devProcess `json:"agent,omitempty"`
}

// processes lists the recorded processes, agents first: the order in
// which to stop them.
func (s *devState) processes() []*devProcess {
	var ps []*devProcess
	for _, c := range s.Clusters {
		if c.Agent != nil {
			ps = append(ps, c.Agent)
		}
	}
	for _, c := range s.Clusters {
		if c.Process != nil {
			ps = append(ps, c.Process)
		}
	}
	if s.Hub.Process != nil {
		ps = append(ps, s.Hub.Process)
	}
	return ps
}

// running lists the recorded processes that still run.
func (s *devState) running() []*devProcess {
	var ps []*devProcess
	for _, p := range s.processes() {
		if p.alive() {
			ps = append(ps, p)
		}
	}
	return ps
}

// save writes the state file atomically.
func (s *devState) save(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+devStateFile+"-")
	if err != nil {
		return fmt.Errorf("write the state of the dev environment: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write the state of the dev environment: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, devStateFile))
}

// errNoDevEnv says that a directory holds no dev environment.
var errNoDevEnv = errors.New("no dev environment")

// loadDevState reads the state file of dir; errNoDevEnv if there is none.
func loadDevState(dir string) (*devState, error) {
	data, err := os.ReadFile(filepath.Join(dir, devStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoDevEnv
	}
	if err != nil {
		return nil, fmt.Errorf("read the state of the dev environment: %w", err)
	}
	s := &devState{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): stop its processes by hand and remove %s", filepath.Join(dir, devStateFile), err, dir)
	}
	return s, nil
}

// defaultDevDir is where dev environments live unless --dir says otherwise.
func defaultDevDir() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".flotilla", "dev")
	}
	return filepath.Join(os.TempDir(), "flotilla-dev")
}
