//go:build tools

// The build's one package (go build k8s.io/kubernetes/cmd/kube-apiserver); this file
// keeps it in the module's graph so `go mod tidy` keeps its requirements.
package kube

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
