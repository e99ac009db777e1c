module github.com/flotilla-io/flotilla/api

go 1.26

require (
	k8s.io/api v0.36.3
	k8s.io/apimachinery v0.36.3
)
