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

package localsvc

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// nginxConf puts a cache in front of the queue as a CDN does: the public
// queue state (the same for everyone, Cache-Control public, max-age=1) is
// answered from the cache, filled by one request at a time and refreshed in
// the background, so the origin sees about one request per second whatever
// the crowd; everything else passes through uncached.
const nginxConf = `worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  proxy_cache_path %[1]s/cache levels=1:2 keys_zone=queue_state:1m max_size=16m inactive=1m use_temp_path=off;
  upstream origin { server %[2]s; keepalive 64; }
  server {
    listen %[3]s;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    location ~ ^/events/[0-9]+/queue/state$ {
      proxy_pass http://origin;
      proxy_cache queue_state;
      proxy_cache_key $uri;
      proxy_cache_lock on;
      proxy_cache_use_stale updating error timeout http_502 http_503;
      proxy_cache_background_update on;
      proxy_cache_revalidate on;
      proxy_set_header Authorization "";
      proxy_set_header Cookie "";
      add_header X-Cache-Status $upstream_cache_status always;
    }
    location / {
      proxy_pass http://origin;
    }
  }
}
`

// StartNginx starts nginx on a free loopback port as a caching reverse
// proxy in front of origin (http://host:port): the local sale's stand-in
// for the CDN in front of the queue. Server.URL is its base URL.
func StartNginx(ctx context.Context, origin string) (*Server, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr != nil {
			return nil, fmt.Errorf("nginx: %w (apt-get install -y nginx)", ErrMissing)
		}
		bin = "/usr/sbin/nginx"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("nginx origin %q: want http://host:port", origin)
	}
	dir, err := os.MkdirTemp("", "ticketfair-nginx-")
	if err != nil {
		return nil, err
	}
	// As root, nginx's workers run as nobody and must reach the cache.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, dir, u.Host, addr)), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;")
	logPath := filepath.Join(dir, "nginx.log")
	s, err := start("nginx", cmd, logPath)
	if err != nil {
		return nil, err
	}
	s.Dir, s.Addr, s.URL = dir, addr, "http://"+addr
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.waitTCP(wctx, filepath.Join(dir, "error.log")); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}
