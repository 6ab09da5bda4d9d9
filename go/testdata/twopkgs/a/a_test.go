// One of two packages of ordinary tests for go_test_test.go (the test: ../body).
package a

import (
	"testing"

	"twopkgs/body"
)

func TestDefaultGenerators(t *testing.T) { body.Run(t) }
