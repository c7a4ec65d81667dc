package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// fileInImage reads one file from an image's layers (the last layer that
// has it wins).
func fileInImage(img v1.Image, name string) ([]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	var found []byte
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rc.Close()
				return nil, err
			}
			if h.Name == name {
				if found, err = io.ReadAll(tr); err != nil {
					rc.Close()
					return nil, err
				}
			}
		}
		rc.Close()
	}
	if found == nil {
		return nil, fmt.Errorf("%s not in the image", name)
	}
	return found, nil
}
