// topologyd-nri: topologyd's NRI plugin for containerd 2.x and CRI-O 1.26+ (docs/nri.md).
// It registers with the runtime's NRI socket and places every container as topologyd decides;
// it holds no policy of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/stub"
	sddaemon "github.com/coreos/go-systemd/v22/daemon"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"topologyd.local/nri/internal/config"
	"topologyd.local/nri/internal/plugin"
	"topologyd.local/nri/internal/podquota"
	pb "topologyd.local/nri/internal/topologydv1"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	// As topologyd's: -c/--config FILE runs, --check-config FILE validates FILE and exits.
	configPath := new(string)
	flag.StringVar(configPath, "config", "", "configuration file (default: the built-in defaults)")
	flag.StringVar(configPath, "c", "", "shorthand for --config")
	checkPath := flag.String("check-config", "", "validate this configuration file and exit")
	showVersion := flag.Bool("version", false, "print the version and exit")
	nriSocket := flag.String("nri-socket", "", "the runtime's NRI socket (overrides nriSocket)")
	topologydSocket := flag.String("topologyd-socket", "", "topologyd's socket (overrides topologydSocket)")
	flag.Parse()
	if *showVersion {
		fmt.Println("topologyd-nri", version)
		return 0
	}
	if *checkPath != "" {
		if _, err := loadConfig(*checkPath, *nriSocket, *topologydSocket); err != nil {
			fmt.Fprintln(os.Stderr, "topologyd-nri:", err)
			return 2
		}
		fmt.Println(*checkPath + ": configuration OK")
		return 0
	}
	cfg, err := loadConfig(*configPath, *nriSocket, *topologydSocket)
	if err != nil {
		fmt.Fprintln(os.Stderr, "topologyd-nri:", err)
		return 2
	}
	level := new(slog.LevelVar)
	log := newLogger(cfg.Log, level)

	conn, err := grpc.NewClient("unix://"+cfg.TopologydSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Error("cannot set up the connection to topologyd", "error", err)
		return 1
	}
	defer conn.Close()
	quota, err := podquota.Open(cfg.Cgroup.Root, cfg.Cgroup.Version, cfg.Cgroup.Driver)
	if err != nil {
		log.Error("cannot find where to lift pod cgroups' CFS quota", "error", err)
		return 1
	}
	p := plugin.New(cfg, log, pb.NewTopologydClient(conn), quota)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range signals {
			if s != syscall.SIGHUP {
				log.Info("stopping", "signal", s.String())
				sddaemon.SdNotify(false, sddaemon.SdNotifyStopping)
				cancel()
				return
			}
			reload(*configPath, *nriSocket, *topologydSocket, level, log)
		}
	}()
	go p.Follow(ctx)
	return serve(ctx, cfg, p, log)
}

func loadConfig(path, nriSocket, topologydSocket string) (config.Config, error) {
	cfg := config.Default()
	if path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return cfg, err
		}
	}
	if nriSocket != "" {
		cfg.NRISocket = nriSocket
	}
	if topologydSocket != "" {
		cfg.TopologydSocket = topologydSocket
	}
	// Flags are checked by the file's rules.
	return cfg, config.Validate(cfg, "command line")
}

// reload re-reads the log settings, as topologyd does on SIGHUP; other keys need a restart.
func reload(path, nriSocket, topologydSocket string, level *slog.LevelVar, log *slog.Logger) {
	cfg, err := loadConfig(path, nriSocket, topologydSocket)
	if err != nil {
		log.Error("SIGHUP: configuration not reloaded", "error", err)
		return
	}
	level.Set(slogLevel(cfg.Log.Level))
	log.Info("SIGHUP: log level reloaded", "level", cfg.Log.Level)
}

// serve registers with the runtime and stays registered: when the runtime goes away (a
// containerd restart), the plugin registers again once it is back, and the runtime's
// Synchronize brings the plugin and topologyd up to date.
func serve(ctx context.Context, cfg config.Config, p *plugin.Plugin, log *slog.Logger) int {
	notified := false
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		// With an OnClose, a lost connection ends Wait instead of the stub's default: exiting.
		s, err := stub.New(p, stub.WithPluginName(cfg.PluginName), stub.WithPluginIdx(cfg.PluginIndex),
			stub.WithSocketPath(cfg.NRISocket), stub.WithOnClose(func() {}))
		if err != nil {
			log.Error("cannot create the NRI stub", "error", err)
			return 1
		}
		p.SetUpdater(s)
		if err = s.Start(ctx); err == nil {
			log.Info("registered", "socket", cfg.NRISocket, "name", cfg.PluginName, "index", cfg.PluginIndex)
			backoff = 200 * time.Millisecond
			if !notified {
				sddaemon.SdNotify(false, sddaemon.SdNotifyReady)
				notified = true
			}
			stopped := make(chan struct{})
			go func() { s.Wait(); close(stopped) }()
			select {
			case <-ctx.Done():
				s.Stop()
				<-stopped
				return 0
			case <-stopped:
				log.Warn("the runtime closed the NRI connection; registering again")
			}
		} else if !errors.Is(err, context.Canceled) {
			log.Warn("cannot register with the runtime yet", "socket", cfg.NRISocket, "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	return 0
}

func slogLevel(level string) slog.Level {
	switch level {
	case "trace":
		return slog.LevelDebug - 4
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	case "critical", "off":
		return slog.LevelError + 4
	}
	return slog.LevelInfo
}

func newLogger(c config.Log, level *slog.LevelVar) *slog.Logger {
	level.Set(slogLevel(c.Level))
	var out io.Writer = os.Stderr
	if c.Level == "off" {
		out = io.Discard
	}
	options := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(out, options))
	}
	return slog.New(slog.NewTextHandler(out, options))
}
