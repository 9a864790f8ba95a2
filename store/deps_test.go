package store_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStoreImportsNothingOfTheServer: the store is the bottom layer, which
// the server's packages (app and what grows beside it) build on; none of
// its files, tests included, may import them, or any package of the
// module outside store/.
func TestStoreImportsNothingOfTheServer(t *testing.T) {
	const module = "github.com/idenplane/idenplane"
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			inModule := p == module || strings.HasPrefix(p, module+"/")
			if inModule && p != module+"/store" && !strings.HasPrefix(p, module+"/store/") {
				t.Errorf("%s imports %s", filepath.Join("store", path), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
