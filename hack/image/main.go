/*
Copyright 2026 The ticketfair Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command image writes an OCI image tarball without a container engine or
// a registry: one layer holding the given files, with the platform,
// entrypoint and user set in its config, so `ctr images import` (or
// `docker load`) takes it as it is. `make image` builds the operator and
// workloads image and the node's sandbox (pause) image with it. It is its
// own module, so the image library never enters the product's binaries.
//
// usage: go run . -o OUT.tar -tag NAME:TAG -entrypoint /manager -user 65532:65532 \
//
//	-add bin/manager=/manager -add /usr/share/zoneinfo=/usr/share/zoneinfo ...
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// files are -add SRC=DST pairs; a directory SRC is added recursively.
type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

// labels are -label KEY=VALUE pairs.
type labels map[string]string

func (l labels) String() string { return fmt.Sprint(map[string]string(l)) }
func (l labels) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return errors.New("want KEY=VALUE")
	}
	l[k] = v
	return nil
}

func main() {
	var add files
	lbl := labels{}
	out := flag.String("o", "", "output tarball")
	tag := flag.String("tag", "", "image name and tag, e.g. ticketfair:dev")
	entrypoint := flag.String("entrypoint", "", "entrypoint, comma-separated")
	user := flag.String("user", "65532:65532", "user[:group] the image runs as")
	arch := flag.String("arch", "amd64", "architecture of the binaries")
	flag.Var(&add, "add", "SRC=DST: file or directory to put into the image (repeatable)")
	flag.Var(lbl, "label", "KEY=VALUE image label (repeatable)")
	flag.Parse()
	if *out == "" || *tag == "" || *entrypoint == "" || len(add) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := build(*out, *tag, strings.Split(*entrypoint, ","), *user, *arch, add, lbl); err != nil {
		log.Fatal(err)
	}
}

func build(out, tag string, entrypoint []string, user, arch string, add files, lbl labels) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	layerTar, err := layer(add)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	// ctr filters out an image without a platform.
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Entrypoint = entrypoint
	cf.Config.User = user
	cf.Config.Labels = lbl
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s, layer %.1f MiB uncompressed, tarball %.1f MiB\n",
		out, tag, float64(len(layerTar))/(1<<20), float64(st.Size())/(1<<20))
	return nil
}

// epoch is every entry's mtime, so the same inputs give the same layer.
var epoch = time.Unix(0, 0)

// layer tars the files, owned by root and readable by everyone, binaries
// executable: the image's user owns nothing, so the root filesystem can be
// mounted read-only.
func layer(add files) ([]byte, error) {
	entries := map[string]string{} // destination -> source
	for _, a := range add {
		src, dst, ok := strings.Cut(a, "=")
		if !ok || !path.IsAbs(dst) {
			return nil, fmt.Errorf("-add %q: want SRC=/DST", a)
		}
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			entries[path.Join(dst, filepath.ToSlash(rel))] = p
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// Parent directories first, then everything in path order.
	for dst := range entries {
		for d := path.Dir(dst); d != "/"; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = ""
			}
		}
	}
	names := make([]string, 0, len(entries))
	for dst := range entries {
		names = append(names, dst)
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dst := range names {
		src := entries[dst]
		hdr := &tar.Header{Name: strings.TrimPrefix(dst, "/"), ModTime: epoch, Format: tar.FormatPAX}
		var fi fs.FileInfo
		if src != "" {
			var err error
			if fi, err = os.Lstat(src); err != nil {
				return nil, err
			}
		}
		switch {
		case src == "" || fi.IsDir():
			hdr.Typeflag, hdr.Mode, hdr.Name = tar.TypeDir, 0o755, hdr.Name+"/"
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return nil, err
			}
			hdr.Typeflag, hdr.Mode, hdr.Linkname = tar.TypeSymlink, 0o777, target
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
			if fi.Mode()&0o111 != 0 {
				hdr.Mode = 0o755
			}
		default:
			return nil, fmt.Errorf("%s: not a file, directory or symlink", src)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			f, err := os.Open(src)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
