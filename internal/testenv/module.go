package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// ModuleFile is the path of a file under the module's root (the directory holding
// go.mod, above the test's directory), such as ModuleFile(t, "api", "openapi.yaml").
func ModuleFile(t testing.TB, parts ...string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for range 10 { // a module is never nested deeper than this here
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir}, parts...)...)
		}
		dir = filepath.Dir(dir)
	}
	t.Fatal("no go.mod above the test's directory")
	return ""
}
