//! **Particles, rendered**: a small renderer in plain wgpu whose particle
//! positions a `#[kernel]` simulates on the same device, in the same
//! buffer the vertex stage reads, in the same submission as the draw.
//!
//!     cargo run --example particles_render                  # writes particles_render.png
//!     cargo run --example particles_render -- frames.png 90 # a path and a number of frames
//!
//! The renderer is the program's own: it creates its wgpu device and queue,
//! its vertex buffer (`VERTEX | STORAGE`: the kernel writes it as a storage
//! buffer, the render pass reads it as instance data; `COPY_DST | COPY_SRC`
//! to write the start and read the result), its
//! pipeline and its render target (a texture: no window needed). onekernel
//! adopts the device (`Device::from_wgpu`) and the vertex buffer
//! (`Buffer::from_wgpu`), and each frame records the simulation step into
//! the frame's encoder (`Device::record`) before the render pass, so that
//! one `queue.submit` runs both, in that order. The last frame is copied
//! out of the texture and saved as a PNG. The example's test runs a few
//! frames on lavapipe and checks the image against the CPU executor's
//! simulation: a particle where each must be, background everywhere else.
//! See docs/interop.md.

use onekernel::prelude::*;

/// One time step: gravity, motion, and bounces off the walls of the
/// clip-space box `[-0.95, 0.95]²` (losing a tenth of the speed on the
/// floor). Positions and velocities are `Vec4` (`z`, `w` unused): the
/// vertex stage reads a position as a `vec4<f32>` attribute.
#[kernel(workgroup_size = 64)]
pub fn step(pos: &mut [Vec4], vel: &mut [Vec4], dt: f32) {
    let i = global_id().x;
    if i >= pos.len() {
        return;
    }
    let mut p = pos[i];
    let mut v = vel[i];
    v.y -= 1.5 * dt;
    p += v * dt;
    if p.x < -0.95 {
        p.x = -1.9 - p.x;
        v.x = -v.x;
    }
    if p.x > 0.95 {
        p.x = 1.9 - p.x;
        v.x = -v.x;
    }
    if p.y < -0.95 {
        p.y = -1.9 - p.y;
        v.y = -v.y * 0.9;
    }
    pos[i] = p;
    vel[i] = v;
}

/// The image's side in pixels.
const SIZE: u32 = 128;
/// Half a particle's side in pixels (each is a square of 2 × HALF).
const HALF: f32 = 3.0;
/// The time step, per frame.
const DT: f32 = 1.0 / 30.0;
/// The background colour (RGBA8).
const BACKGROUND: [u8; 4] = [16, 20, 32, 255];

/// The render pipeline's shaders: a square per particle (instance),
/// coloured by its index.
const SHADER: &str = r#"
struct Out {
    @builtin(position) pos: vec4<f32>,
    @location(0) color: vec3<f32>,
};

@vertex
fn vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32, @location(0) p: vec4<f32>) -> Out {
    var corners = array<vec2<f32>, 6>(
        vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
        vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0),
    );
    let half = HALF * 2.0 / SIZE;
    var out: Out;
    out.pos = vec4(p.xy + corners[v] * half, 0.0, 1.0);
    let t = f32(i) * 0.37;
    out.color = 0.55 + 0.45 * vec3(cos(t), cos(t + 2.1), cos(t + 4.2));
    return out;
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    return vec4(in.color, 1.0);
}
"#;

/// The starting state: `n` particles in a fountain at the bottom centre,
/// thrown up and sideways at speeds spread by the golden ratio.
pub fn start(n: usize) -> (Vec<Vec4>, Vec<Vec4>) {
    (0..n)
        .map(|i| {
            let (u, w) = ((i as f32 * 0.618_034).fract(), (i as f32 * 0.754_878).fract());
            let pos = Vec4::new(0.05 * (u - 0.5), -0.85, 0.0, 1.0);
            let vel = Vec4::new(1.6 * (u - 0.5) * (0.4 + w), 0.9 + 1.0 * w, 0.0, 0.0);
            (pos, vel)
        })
        .unzip()
}

/// The program's own wgpu objects: what a renderer has before it uses
/// onekernel.
pub struct Renderer {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pipeline: wgpu::RenderPipeline,
    target: wgpu::Texture,
    /// The particles' positions: read by the vertex stage, written by the
    /// kernel.
    pub positions: wgpu::Buffer,
    /// The image, copied out of `target` (rows of `SIZE * 4` bytes).
    readback: wgpu::Buffer,
}

impl Renderer {
    /// A device of its own (wgpu's default limits and no optional
    /// features, as many renderers create it), on the adapter wgpu picks
    /// (`WGPU_BACKEND` and `WGPU_ADAPTER_NAME` choose, as for `Device::gpu`).
    pub fn new(particles: usize) -> Result<Renderer, Box<dyn std::error::Error>> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))?;
        let source = SHADER.replace("HALF", &format!("{HALF:.1}")).replace("SIZE", &format!("{SIZE}.0"));
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("particles"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("particles"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 16,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x4],
                })],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        let target = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("frame"),
            size: wgpu::Extent3d { width: SIZE, height: SIZE, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        // Vertex data that a kernel writes: STORAGE next to VERTEX (and the
        // copies `Buffer::write` and `Buffer::read` make).
        let positions = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("particle positions"),
            size: particles as u64 * 16,
            usage: wgpu::BufferUsages::VERTEX
                | wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame read-back"),
            size: u64::from(SIZE * SIZE * 4),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        Ok(Renderer { adapter, device, queue, pipeline, target, positions, readback })
    }

    /// Records the render pass: clear, then one square per particle.
    fn draw(&self, encoder: &mut wgpu::CommandEncoder, particles: u32) {
        let view = self.target.create_view(&Default::default());
        let [r, g, b, a] = BACKGROUND.map(|c| f64::from(c) / 255.0);
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("particles"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_vertex_buffer(0, self.positions.slice(..));
        pass.draw(0..6, 0..particles);
    }

    /// Records the copy of the frame into the read-back buffer.
    fn copy_out(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.copy_texture_to_buffer(
            self.target.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(SIZE * 4),
                    rows_per_image: Some(SIZE),
                },
            },
            wgpu::Extent3d { width: SIZE, height: SIZE, depth_or_array_layers: 1 },
        );
    }

    /// The frame copied out last: RGBA8 rows, top row first.
    fn pixels(&self) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.readback.map_async(wgpu::MapMode::Read, .., move |r| tx.send(r).expect("receiver alive"));
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        rx.recv()??;
        let pixels = self.readback.get_mapped_range(..)?.to_vec();
        self.readback.unmap();
        Ok(pixels)
    }
}

/// Runs `frames` frames of `n` particles: each frame one submission of the
/// simulation step (a kernel, recorded) and the render pass that draws its
/// result. Returns the last frame (RGBA8) and the positions the kernel
/// computed.
pub fn run(renderer: &Renderer, n: usize, frames: usize) -> Result<(Vec<u8>, Vec<Vec4>), Box<dyn std::error::Error>> {
    // ANCHOR: frame
    // Adopt the program's device and its vertex buffer: no copy of either.
    let gpu = Device::from_wgpu(&renderer.adapter, &renderer.device, &renderer.queue)?;
    let mut positions = Buffer::<Vec4>::from_wgpu(&gpu, &renderer.positions, n)?;
    let (pos0, vel0) = start(n);
    positions.write(&pos0)?; // COPY_DST
    let mut velocities = Buffer::from_slice(&gpu, &vel0)?; // onekernel's own
    for frame in 0..frames {
        let mut encoder = renderer.device.create_command_encoder(&Default::default());
        // The simulation step goes into this frame's encoder, before the draw.
        let (launched, recorded) =
            gpu.record(&mut encoder, || step::launch(&gpu, n, &mut positions, &mut velocities, DT))?;
        launched?;
        renderer.draw(&mut encoder, n as u32);
        if frame + 1 == frames {
            renderer.copy_out(&mut encoder);
        }
        renderer.queue.submit([encoder.finish()]);
        recorded.check()?; // errors of checked launches (ONEKERNEL_CHECKED=1)
    }
    // ANCHOR_END: frame
    let pixels = renderer.pixels()?;
    Ok((pixels, positions.read()?)) // COPY_SRC
}

/// The same simulation on any device, with onekernel's own buffers.
pub fn simulate(device: &Device, n: usize, frames: usize) -> Result<Vec<Vec4>, Box<dyn std::error::Error>> {
    let (pos0, vel0) = start(n);
    let mut pos = Buffer::from_slice(device, &pos0)?;
    let mut vel = Buffer::from_slice(device, &vel0)?;
    for _ in 0..frames {
        step::launch(device, n, &mut pos, &mut vel, DT)?;
    }
    Ok(pos.read()?)
}

/// Writes RGBA8 `pixels` of the frame as a PNG.
pub fn save_png(path: &std::path::Path, pixels: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, SIZE, SIZE);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Best);
    encoder.write_header()?.write_image_data(pixels)?;
    Ok(())
}

/// The pixel (column, row) a clip-space position falls in.
pub fn pixel_of(p: Vec4) -> (f32, f32) {
    ((p.x + 1.0) / 2.0 * SIZE as f32, (1.0 - p.y) / 2.0 * SIZE as f32)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "particles_render.png".into());
    let frames: usize = args.next().map_or(Ok(40), |f| f.parse())?;
    let n = 96;
    let renderer = Renderer::new(n)?;
    let (pixels, positions) = run(&renderer, n, frames)?;
    save_png(std::path::Path::new(&path), &pixels)?;
    let cpu = simulate(&Device::cpu(), n, frames)?;
    let worst = positions.iter().zip(&cpu).map(|(g, c)| (*g - *c).abs().max_element()).fold(0.0f32, f32::max);
    println!(
        "{n} particles, {frames} frames on {}: saved {path}; the kernel's positions are within {worst:.1e} of the CPU executor's",
        renderer.adapter.get_info().name
    );
    Ok(())
}

#[test]
fn rendered_frames_match_the_cpu_simulation() {
    let (n, frames) = (48, 5);
    let renderer = Renderer::new(n).expect("a GPU adapter (CI uses Mesa's lavapipe; see .ci/run)");
    let (pixels, gpu) = run(&renderer, n, frames).unwrap();
    let cpu = simulate(&Device::cpu(), n, frames).unwrap();
    for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        assert!((*g - *c).abs().max_element() < 1e-4, "particle {i}: GPU {g}, CPU {c}");
    }
    // The particles moved: the frame is not the starting state.
    assert!(cpu.iter().zip(start(n).0).all(|(p, p0)| (*p - p0).length() > 0.01));
    // Through the PNG encoder and back.
    let path = std::env::temp_dir().join(format!("particles_render_{}.png", std::process::id()));
    save_png(&path, &pixels).unwrap();
    let mut reader =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap())).read_info().unwrap();
    let mut decoded = vec![0; reader.output_buffer_size()];
    reader.next_frame(&mut decoded).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(decoded, pixels);
    // Every pixel: a particle's colour within its square (by the CPU
    // executor's positions), the background well outside every square;
    // the pixels at a square's edge may be either.
    let centres: Vec<(f32, f32)> = cpu.iter().map(|&p| pixel_of(p)).collect();
    let (mut inside, mut outside) = (0, 0);
    for row in 0..SIZE {
        for col in 0..SIZE {
            let (x, y) = (col as f32 + 0.5, row as f32 + 0.5);
            let distance = centres.iter().map(|&(cx, cy)| (x - cx).abs().max((y - cy).abs())).fold(f32::MAX, f32::min);
            let at = ((row * SIZE + col) * 4) as usize;
            let pixel = &pixels[at..at + 4];
            if distance < HALF - 1.0 {
                assert_ne!(pixel, BACKGROUND, "pixel ({col}, {row}) is inside a particle's square");
                inside += 1;
            } else if distance > HALF + 1.0 {
                assert_eq!(pixel, BACKGROUND, "pixel ({col}, {row}) is {distance} px from every particle");
                outside += 1;
            }
        }
    }
    assert!(inside >= n && outside > (SIZE * SIZE / 2) as usize, "{inside} inside, {outside} outside");
}
