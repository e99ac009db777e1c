package ociimage

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push pushes the image archive file to the tag it holds, with the
// credentials of docker login (the default keychain), and returns the
// pushed reference with its digest.
func Push(file string) (string, error) {
	tag, img, err := ReadArchive(file)
	if err != nil {
		return "", err
	}
	if err := remote.Write(tag, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return tag.String() + "@" + digest.String(), nil
}
