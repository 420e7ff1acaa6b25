//! The menu of kernels to start from: the learning path's examples
//! (examples/*.rs, docs/learning-path.md) and the kernels of the book's
//! first four lessons (docs/book; the fifth, tensor cores, needs a GPU with
//! cooperative matrices). Each preset is the example file's kernels and
//! helpers as written there (the host code is left out: see
//! [`crate::source::kernel_items`]), with inputs for a first run.

use serde::Serialize;
use serde_json::Value;

/// One menu entry.
#[derive(Debug, Serialize)]
pub struct Preset {
    /// Its id in the menu.
    pub id: &'static str,
    /// The menu's group.
    pub group: &'static str,
    /// The menu's text.
    pub title: &'static str,
    /// The kernel the run form starts with.
    pub kernel: &'static str,
    /// The editor's text.
    pub source: String,
    /// The run form's inputs (`grid` and `inputs`, as a run request has them).
    pub run: Value,
}

struct Entry {
    id: &'static str,
    group: &'static str,
    title: &'static str,
    file: &'static str,
    kernel: &'static str,
    run: &'static str,
}

const PATH: &str = "Learning path";
const BOOK: &str = "The book's lessons";

macro_rules! example {
    ($name:literal) => {
        include_str!(concat!("../../../examples/", $name, ".rs"))
    };
}

const ENTRIES: &[Entry] = &[
    Entry {
        id: "map",
        group: PATH,
        title: "1. map",
        file: example!("map"),
        kernel: "map",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"a": {"len": 1000, "formula": "(i % 17) * 0.5"}, "out": {"len": 1000}, "c": {"value": 2}}}"#,
    },
    Entry {
        id: "zip",
        group: PATH,
        title: "2. zip",
        file: example!("zip"),
        kernel: "zip",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"a": {"len": 1000, "formula": "i"}, "b": {"len": 1000, "formula": "sin(i / 50) * 100"}, "out": {"len": 1000}}}"#,
    },
    Entry {
        id: "guards",
        group: PATH,
        title: "3. guards",
        file: example!("guards"),
        kernel: "guards",
        run: r#"{"grid": {"blocks": [6]}, "inputs": {"a": {"len": 1000, "formula": "i / 10"}, "out": {"len": 1000}}}"#,
    },
    Entry {
        id: "map_2d",
        group: PATH,
        title: "4. map_2d",
        file: example!("map_2d"),
        kernel: "map_2d",
        run: r#"{"grid": {"threads": [64, 48]}, "inputs": {"a": {"shape": [48, 64], "formula": "x + y"}, "out": {"shape": [48, 64]}, "width": {"value": 64}, "height": {"value": 48}}}"#,
    },
    Entry {
        id: "broadcast",
        group: PATH,
        title: "5. broadcast",
        file: example!("broadcast"),
        kernel: "broadcast",
        run: r#"{"grid": {"threads": [64, 48]}, "inputs": {"col": {"len": 48, "formula": "i"}, "row": {"len": 64, "formula": "sin(i / 8)"}, "out": {"shape": [48, 64]}}}"#,
    },
    Entry {
        id: "blocks",
        group: PATH,
        title: "6. blocks",
        file: example!("blocks"),
        kernel: "blocks",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"a": {"len": 1000, "formula": "i"}, "out": {"len": 1000}, "block_of": {"len": 1000}}}"#,
    },
    Entry {
        id: "blocks_2d",
        group: PATH,
        title: "7. blocks_2d",
        file: example!("blocks_2d"),
        kernel: "blocks_2d",
        run: r#"{"grid": {"threads": [40, 20]}, "inputs": {"a": {"shape": [20, 40], "formula": "x * y"}, "out": {"shape": [20, 40]}, "block_of": {"shape": [20, 40]}, "width": {"value": 40}, "height": {"value": 20}}}"#,
    },
    Entry {
        id: "shared_staging",
        group: PATH,
        title: "8. shared_staging",
        file: example!("shared_staging"),
        kernel: "shared_staging",
        run: r#"{"grid": {"threads": [1024]}, "inputs": {"a": {"len": 1024, "formula": "i"}, "out": {"len": 1024}}}"#,
    },
    Entry {
        id: "pooling",
        group: PATH,
        title: "9. pooling",
        file: example!("pooling"),
        kernel: "window_sum",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"x": {"len": 1000, "random": {"seed": 7, "min": 0, "max": 1}}, "out": {"len": 1000}}}"#,
    },
    Entry {
        id: "dot_product",
        group: PATH,
        title: "10. dot_product",
        file: example!("dot_product"),
        kernel: "dot_partial",
        run: r#"{"grid": {"threads": [4096]}, "inputs": {"a": {"len": 4096, "formula": "1"}, "b": {"len": 4096, "formula": "i % 4"}, "partials": {"len": 16}}}"#,
    },
    Entry {
        id: "conv1d",
        group: PATH,
        title: "11. conv1d",
        file: example!("conv1d"),
        kernel: "conv1d",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"x": {"len": 1000, "formula": "sin(i / 20)"}, "w": {"len": 5, "formula": "(3 - abs(i - 2)) / 9"}, "out": {"len": 1000}}}"#,
    },
    Entry {
        id: "block_sum",
        group: PATH,
        title: "12. block_sum",
        file: example!("block_sum"),
        kernel: "block_sum",
        run: r#"{"grid": {"threads": [4096]}, "inputs": {"input": {"len": 4096, "formula": "1"}, "sums": {"len": 16}}}"#,
    },
    Entry {
        id: "row_sum",
        group: PATH,
        title: "13. row_sum",
        file: example!("row_sum"),
        kernel: "row_sum",
        run: r#"{"grid": {"blocks": [64]}, "inputs": {"matrix": {"shape": [64, 100], "formula": "y"}, "sums": {"len": 64}, "cols": {"value": 100}}}"#,
    },
    Entry {
        id: "matmul",
        group: PATH,
        title: "14. matmul",
        file: example!("matmul"),
        kernel: "matmul",
        run: r#"{"grid": {"threads": [32, 32]}, "inputs": {"a": {"shape": [32, 32], "random": {"seed": 1, "min": -1, "max": 1}}, "b": {"shape": [32, 32], "random": {"seed": 2, "min": -1, "max": 1}}, "c": {"shape": [32, 32]}, "m": {"value": 32}, "k": {"value": 32}, "n": {"value": 32}}}"#,
    },
    Entry {
        id: "prefix_sum",
        group: PATH,
        title: "15. prefix_sum",
        file: example!("prefix_sum"),
        kernel: "scan_blocks",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"input": {"len": 1000, "formula": "1"}, "output": {"len": 1000}, "block_totals": {"len": 4}}}"#,
    },
    Entry {
        id: "histogram",
        group: PATH,
        title: "16. histogram",
        file: example!("histogram"),
        kernel: "histogram",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"values": {"len": 1000, "random": {"seed": 3, "min": 0, "max": 16}}, "counts": {"len": 16}}}"#,
    },
    Entry {
        id: "book_saxpy",
        group: BOOK,
        title: "Why GPUs: saxpy",
        file: example!("gpu_vs_cpu"),
        kernel: "saxpy",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"x": {"len": 1000, "formula": "i / 100"}, "y": {"len": 1000, "formula": "1"}, "out": {"len": 1000}, "alpha": {"value": 2.5}}}"#,
    },
    Entry {
        id: "book_matmul",
        group: BOOK,
        title: "Why GPUs: matmul",
        file: example!("gpu_vs_cpu"),
        kernel: "matmul",
        run: r#"{"grid": {"threads": [64, 64]}, "inputs": {"a": {"shape": [64, 64], "random": {"seed": 1}}, "b": {"shape": [64, 64], "random": {"seed": 2}}, "c": {"shape": [64, 64]}, "n": {"value": 64}}}"#,
    },
    Entry {
        id: "book_threads",
        group: BOOK,
        title: "Threads, blocks and grids: vector_add",
        file: example!("vector_add"),
        kernel: "vector_add",
        run: r#"{"grid": {"threads": [1000]}, "inputs": {"a": {"len": 1000, "formula": "i * 0.5"}, "b": {"len": 1000, "formula": "(i % 1000) * 0.25"}, "out": {"len": 1000}}}"#,
    },
    Entry {
        id: "book_kernel",
        group: BOOK,
        title: "Writing a kernel function: vector_add",
        file: example!("vector_add"),
        kernel: "vector_add",
        run: r#"{"grid": {"threads": [300]}, "inputs": {"a": {"len": 300, "random": {"seed": 5, "min": 0, "max": 10}}, "b": {"len": 300, "formula": "-i"}, "out": {"len": 300}}}"#,
    },
    Entry {
        id: "book_moving",
        group: BOOK,
        title: "Moving data: vector_add on 1M elements",
        file: example!("vector_add"),
        kernel: "vector_add",
        run: r#"{"grid": {"threads": [1048576]}, "inputs": {"a": {"len": 1048576, "formula": "i"}, "b": {"len": 1048576, "formula": "1"}, "out": {"len": 1048576}}}"#,
    },
];

/// Every preset, in menu order.
pub fn all() -> Vec<Preset> {
    ENTRIES
        .iter()
        .map(|e| Preset {
            id: e.id,
            group: e.group,
            title: e.title,
            kernel: e.kernel,
            source: crate::source::kernel_items(e.file),
            run: serde_json::from_str(e.run).unwrap_or(Value::Null),
        })
        .collect()
}
