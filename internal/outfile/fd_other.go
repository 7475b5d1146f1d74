//go:build !unix

package outfile

import (
	"errors"
	"io/fs"
	"os"
)

// fdName: descriptors are not named as files here.
func fdName(string) (int, bool) { return 0, false }

func dupFile(int, string) (*os.File, error) { return nil, errors.ErrUnsupported }

func fstat(int, string) (fs.FileInfo, error) { return nil, errors.ErrUnsupported }
