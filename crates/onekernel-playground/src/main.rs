//! `onekernel-playground [--host 127.0.0.1] [--port 8080]`: starts the
//! playground's web server and prints its URL.

use clap::Parser;
use onekernel_playground::{Limits, Playground};
use std::io::Write;

/// A web page where you type a kernel and see what the GPU runs.
#[derive(Parser)]
#[command(name = "onekernel-playground", version, about)]
struct Args {
    /// The address to listen on (only this machine by default; the
    /// playground runs kernels anyone who can reach it types).
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// The port (0: any free port).
    #[arg(short, long, default_value_t = 8080)]
    port: u16,
}

fn main() {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let code = runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind((args.host, args.port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: cannot listen on {}:{}: {e}", args.host, args.port);
                return 2;
            }
        };
        let playground = Playground::new(Limits::default());
        match playground.device() {
            Ok(name) => eprintln!("kernels run on: {name}"),
            Err(e) => eprintln!("warning: no GPU adapter ({e}): the page compiles kernels but cannot run them"),
        }
        let addr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        println!("onekernel playground: http://{addr}/");
        let _ = std::io::stdout().flush();
        match onekernel_playground::serve(listener, playground).await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {e}");
                1
            }
        }
    });
    std::process::exit(code);
}
