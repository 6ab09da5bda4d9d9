package frameworks

// The modules docs/frameworks.md's Go blocks import: named here so that go.mod
// (and `go mod tidy`) keeps them, since the blocks are built under testdata/.
import (
	_ "gorm.io/driver/postgres"
	_ "gorm.io/gorm"
)
