//! Plain words of every size up to 512 bytes, as buffer elements: the
//! random structs of `structs.rs` have no Rust type, so their bytes travel
//! in one of these, bound where the kernel declares its struct (the
//! launch's parameter types say so). Generated (one struct per size, its
//! words in arrays bytemuck knows); `with_raw!` picks one by size.

use onekernel::{abi::DataType, Element};
use std::borrow::Cow;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw1([u32; 1]);
impl Element for Raw1 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 4, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw2([u32; 2]);
impl Element for Raw2 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 8, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw3([u32; 3]);
impl Element for Raw3 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 12, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw4([u32; 4]);
impl Element for Raw4 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 16, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw5([u32; 5]);
impl Element for Raw5 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 20, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw6([u32; 6]);
impl Element for Raw6 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 24, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw7([u32; 7]);
impl Element for Raw7 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 28, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw8([u32; 8]);
impl Element for Raw8 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 32, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw9([u32; 9]);
impl Element for Raw9 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 36, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw10([u32; 10]);
impl Element for Raw10 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 40, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw11([u32; 11]);
impl Element for Raw11 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 44, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw12([u32; 12]);
impl Element for Raw12 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 48, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw13([u32; 13]);
impl Element for Raw13 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 52, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw14([u32; 14]);
impl Element for Raw14 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 56, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw15([u32; 15]);
impl Element for Raw15 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 60, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw16([u32; 16]);
impl Element for Raw16 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 64, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw17([u32; 17]);
impl Element for Raw17 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 68, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw18([u32; 18]);
impl Element for Raw18 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 72, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw19([u32; 19]);
impl Element for Raw19 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 76, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw20([u32; 20]);
impl Element for Raw20 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 80, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw21([u32; 21]);
impl Element for Raw21 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 84, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw22([u32; 22]);
impl Element for Raw22 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 88, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw23([u32; 23]);
impl Element for Raw23 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 92, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw24([u32; 24]);
impl Element for Raw24 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 96, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw25([u32; 25]);
impl Element for Raw25 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 100, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw26([u32; 26]);
impl Element for Raw26 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 104, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw27([u32; 27]);
impl Element for Raw27 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 108, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw28([u32; 28]);
impl Element for Raw28 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 112, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw29([u32; 29]);
impl Element for Raw29 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 116, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw30([u32; 30]);
impl Element for Raw30 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 120, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw31([u32; 31]);
impl Element for Raw31 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 124, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw32([u32; 32]);
impl Element for Raw32 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 128, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw33([u32; 32], [u32; 1]);
impl Element for Raw33 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 132, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw34([u32; 32], [u32; 2]);
impl Element for Raw34 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 136, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw35([u32; 32], [u32; 3]);
impl Element for Raw35 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 140, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw36([u32; 32], [u32; 4]);
impl Element for Raw36 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 144, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw37([u32; 32], [u32; 5]);
impl Element for Raw37 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 148, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw38([u32; 32], [u32; 6]);
impl Element for Raw38 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 152, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw39([u32; 32], [u32; 7]);
impl Element for Raw39 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 156, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw40([u32; 32], [u32; 8]);
impl Element for Raw40 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 160, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw41([u32; 32], [u32; 9]);
impl Element for Raw41 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 164, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw42([u32; 32], [u32; 10]);
impl Element for Raw42 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 168, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw43([u32; 32], [u32; 11]);
impl Element for Raw43 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 172, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw44([u32; 32], [u32; 12]);
impl Element for Raw44 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 176, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw45([u32; 32], [u32; 13]);
impl Element for Raw45 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 180, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw46([u32; 32], [u32; 14]);
impl Element for Raw46 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 184, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw47([u32; 32], [u32; 15]);
impl Element for Raw47 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 188, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw48([u32; 32], [u32; 16]);
impl Element for Raw48 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 192, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw49([u32; 32], [u32; 17]);
impl Element for Raw49 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 196, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw50([u32; 32], [u32; 18]);
impl Element for Raw50 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 200, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw51([u32; 32], [u32; 19]);
impl Element for Raw51 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 204, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw52([u32; 32], [u32; 20]);
impl Element for Raw52 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 208, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw53([u32; 32], [u32; 21]);
impl Element for Raw53 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 212, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw54([u32; 32], [u32; 22]);
impl Element for Raw54 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 216, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw55([u32; 32], [u32; 23]);
impl Element for Raw55 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 220, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw56([u32; 32], [u32; 24]);
impl Element for Raw56 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 224, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw57([u32; 32], [u32; 25]);
impl Element for Raw57 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 228, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw58([u32; 32], [u32; 26]);
impl Element for Raw58 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 232, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw59([u32; 32], [u32; 27]);
impl Element for Raw59 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 236, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw60([u32; 32], [u32; 28]);
impl Element for Raw60 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 240, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw61([u32; 32], [u32; 29]);
impl Element for Raw61 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 244, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw62([u32; 32], [u32; 30]);
impl Element for Raw62 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 248, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw63([u32; 32], [u32; 31]);
impl Element for Raw63 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 252, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw64([u32; 32], [u32; 32]);
impl Element for Raw64 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 256, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw65([u32; 32], [u32; 32], [u32; 1]);
impl Element for Raw65 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 260, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw66([u32; 32], [u32; 32], [u32; 2]);
impl Element for Raw66 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 264, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw67([u32; 32], [u32; 32], [u32; 3]);
impl Element for Raw67 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 268, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw68([u32; 32], [u32; 32], [u32; 4]);
impl Element for Raw68 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 272, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw69([u32; 32], [u32; 32], [u32; 5]);
impl Element for Raw69 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 276, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw70([u32; 32], [u32; 32], [u32; 6]);
impl Element for Raw70 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 280, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw71([u32; 32], [u32; 32], [u32; 7]);
impl Element for Raw71 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 284, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw72([u32; 32], [u32; 32], [u32; 8]);
impl Element for Raw72 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 288, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw73([u32; 32], [u32; 32], [u32; 9]);
impl Element for Raw73 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 292, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw74([u32; 32], [u32; 32], [u32; 10]);
impl Element for Raw74 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 296, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw75([u32; 32], [u32; 32], [u32; 11]);
impl Element for Raw75 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 300, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw76([u32; 32], [u32; 32], [u32; 12]);
impl Element for Raw76 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 304, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw77([u32; 32], [u32; 32], [u32; 13]);
impl Element for Raw77 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 308, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw78([u32; 32], [u32; 32], [u32; 14]);
impl Element for Raw78 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 312, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw79([u32; 32], [u32; 32], [u32; 15]);
impl Element for Raw79 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 316, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw80([u32; 32], [u32; 32], [u32; 16]);
impl Element for Raw80 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 320, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw81([u32; 32], [u32; 32], [u32; 17]);
impl Element for Raw81 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 324, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw82([u32; 32], [u32; 32], [u32; 18]);
impl Element for Raw82 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 328, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw83([u32; 32], [u32; 32], [u32; 19]);
impl Element for Raw83 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 332, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw84([u32; 32], [u32; 32], [u32; 20]);
impl Element for Raw84 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 336, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw85([u32; 32], [u32; 32], [u32; 21]);
impl Element for Raw85 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 340, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw86([u32; 32], [u32; 32], [u32; 22]);
impl Element for Raw86 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 344, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw87([u32; 32], [u32; 32], [u32; 23]);
impl Element for Raw87 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 348, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw88([u32; 32], [u32; 32], [u32; 24]);
impl Element for Raw88 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 352, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw89([u32; 32], [u32; 32], [u32; 25]);
impl Element for Raw89 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 356, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw90([u32; 32], [u32; 32], [u32; 26]);
impl Element for Raw90 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 360, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw91([u32; 32], [u32; 32], [u32; 27]);
impl Element for Raw91 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 364, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw92([u32; 32], [u32; 32], [u32; 28]);
impl Element for Raw92 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 368, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw93([u32; 32], [u32; 32], [u32; 29]);
impl Element for Raw93 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 372, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw94([u32; 32], [u32; 32], [u32; 30]);
impl Element for Raw94 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 376, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw95([u32; 32], [u32; 32], [u32; 31]);
impl Element for Raw95 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 380, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw96([u32; 32], [u32; 32], [u32; 32]);
impl Element for Raw96 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 384, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw97([u32; 32], [u32; 32], [u32; 32], [u32; 1]);
impl Element for Raw97 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 388, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw98([u32; 32], [u32; 32], [u32; 32], [u32; 2]);
impl Element for Raw98 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 392, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw99([u32; 32], [u32; 32], [u32; 32], [u32; 3]);
impl Element for Raw99 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 396, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw100([u32; 32], [u32; 32], [u32; 32], [u32; 4]);
impl Element for Raw100 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 400, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw101([u32; 32], [u32; 32], [u32; 32], [u32; 5]);
impl Element for Raw101 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 404, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw102([u32; 32], [u32; 32], [u32; 32], [u32; 6]);
impl Element for Raw102 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 408, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw103([u32; 32], [u32; 32], [u32; 32], [u32; 7]);
impl Element for Raw103 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 412, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw104([u32; 32], [u32; 32], [u32; 32], [u32; 8]);
impl Element for Raw104 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 416, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw105([u32; 32], [u32; 32], [u32; 32], [u32; 9]);
impl Element for Raw105 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 420, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw106([u32; 32], [u32; 32], [u32; 32], [u32; 10]);
impl Element for Raw106 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 424, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw107([u32; 32], [u32; 32], [u32; 32], [u32; 11]);
impl Element for Raw107 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 428, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw108([u32; 32], [u32; 32], [u32; 32], [u32; 12]);
impl Element for Raw108 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 432, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw109([u32; 32], [u32; 32], [u32; 32], [u32; 13]);
impl Element for Raw109 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 436, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw110([u32; 32], [u32; 32], [u32; 32], [u32; 14]);
impl Element for Raw110 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 440, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw111([u32; 32], [u32; 32], [u32; 32], [u32; 15]);
impl Element for Raw111 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 444, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw112([u32; 32], [u32; 32], [u32; 32], [u32; 16]);
impl Element for Raw112 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 448, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw113([u32; 32], [u32; 32], [u32; 32], [u32; 17]);
impl Element for Raw113 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 452, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw114([u32; 32], [u32; 32], [u32; 32], [u32; 18]);
impl Element for Raw114 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 456, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw115([u32; 32], [u32; 32], [u32; 32], [u32; 19]);
impl Element for Raw115 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 460, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw116([u32; 32], [u32; 32], [u32; 32], [u32; 20]);
impl Element for Raw116 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 464, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw117([u32; 32], [u32; 32], [u32; 32], [u32; 21]);
impl Element for Raw117 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 468, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw118([u32; 32], [u32; 32], [u32; 32], [u32; 22]);
impl Element for Raw118 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 472, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw119([u32; 32], [u32; 32], [u32; 32], [u32; 23]);
impl Element for Raw119 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 476, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw120([u32; 32], [u32; 32], [u32; 32], [u32; 24]);
impl Element for Raw120 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 480, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw121([u32; 32], [u32; 32], [u32; 32], [u32; 25]);
impl Element for Raw121 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 484, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw122([u32; 32], [u32; 32], [u32; 32], [u32; 26]);
impl Element for Raw122 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 488, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw123([u32; 32], [u32; 32], [u32; 32], [u32; 27]);
impl Element for Raw123 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 492, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw124([u32; 32], [u32; 32], [u32; 32], [u32; 28]);
impl Element for Raw124 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 496, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw125([u32; 32], [u32; 32], [u32; 32], [u32; 29]);
impl Element for Raw125 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 500, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw126([u32; 32], [u32; 32], [u32; 32], [u32; 30]);
impl Element for Raw126 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 504, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw127([u32; 32], [u32; 32], [u32; 32], [u32; 31]);
impl Element for Raw127 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 508, align: 4 };
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Raw128([u32; 32], [u32; 32], [u32; 32], [u32; 32]);
impl Element for Raw128 {
    const TYPE: DataType = DataType::Struct { name: Cow::Borrowed("raw"), size: 512, align: 4 };
}

/// `with_raw!(words, f, args..)`: `f::<RawN>(args..)` for `N == words`
/// (1 to 128).
#[macro_export]
macro_rules! with_raw {
    ($words:expr, $f:ident, $($arg:expr),*) => {
        match $words {
            1 => $f::<$crate::raw::Raw1>($($arg),*),
            2 => $f::<$crate::raw::Raw2>($($arg),*),
            3 => $f::<$crate::raw::Raw3>($($arg),*),
            4 => $f::<$crate::raw::Raw4>($($arg),*),
            5 => $f::<$crate::raw::Raw5>($($arg),*),
            6 => $f::<$crate::raw::Raw6>($($arg),*),
            7 => $f::<$crate::raw::Raw7>($($arg),*),
            8 => $f::<$crate::raw::Raw8>($($arg),*),
            9 => $f::<$crate::raw::Raw9>($($arg),*),
            10 => $f::<$crate::raw::Raw10>($($arg),*),
            11 => $f::<$crate::raw::Raw11>($($arg),*),
            12 => $f::<$crate::raw::Raw12>($($arg),*),
            13 => $f::<$crate::raw::Raw13>($($arg),*),
            14 => $f::<$crate::raw::Raw14>($($arg),*),
            15 => $f::<$crate::raw::Raw15>($($arg),*),
            16 => $f::<$crate::raw::Raw16>($($arg),*),
            17 => $f::<$crate::raw::Raw17>($($arg),*),
            18 => $f::<$crate::raw::Raw18>($($arg),*),
            19 => $f::<$crate::raw::Raw19>($($arg),*),
            20 => $f::<$crate::raw::Raw20>($($arg),*),
            21 => $f::<$crate::raw::Raw21>($($arg),*),
            22 => $f::<$crate::raw::Raw22>($($arg),*),
            23 => $f::<$crate::raw::Raw23>($($arg),*),
            24 => $f::<$crate::raw::Raw24>($($arg),*),
            25 => $f::<$crate::raw::Raw25>($($arg),*),
            26 => $f::<$crate::raw::Raw26>($($arg),*),
            27 => $f::<$crate::raw::Raw27>($($arg),*),
            28 => $f::<$crate::raw::Raw28>($($arg),*),
            29 => $f::<$crate::raw::Raw29>($($arg),*),
            30 => $f::<$crate::raw::Raw30>($($arg),*),
            31 => $f::<$crate::raw::Raw31>($($arg),*),
            32 => $f::<$crate::raw::Raw32>($($arg),*),
            33 => $f::<$crate::raw::Raw33>($($arg),*),
            34 => $f::<$crate::raw::Raw34>($($arg),*),
            35 => $f::<$crate::raw::Raw35>($($arg),*),
            36 => $f::<$crate::raw::Raw36>($($arg),*),
            37 => $f::<$crate::raw::Raw37>($($arg),*),
            38 => $f::<$crate::raw::Raw38>($($arg),*),
            39 => $f::<$crate::raw::Raw39>($($arg),*),
            40 => $f::<$crate::raw::Raw40>($($arg),*),
            41 => $f::<$crate::raw::Raw41>($($arg),*),
            42 => $f::<$crate::raw::Raw42>($($arg),*),
            43 => $f::<$crate::raw::Raw43>($($arg),*),
            44 => $f::<$crate::raw::Raw44>($($arg),*),
            45 => $f::<$crate::raw::Raw45>($($arg),*),
            46 => $f::<$crate::raw::Raw46>($($arg),*),
            47 => $f::<$crate::raw::Raw47>($($arg),*),
            48 => $f::<$crate::raw::Raw48>($($arg),*),
            49 => $f::<$crate::raw::Raw49>($($arg),*),
            50 => $f::<$crate::raw::Raw50>($($arg),*),
            51 => $f::<$crate::raw::Raw51>($($arg),*),
            52 => $f::<$crate::raw::Raw52>($($arg),*),
            53 => $f::<$crate::raw::Raw53>($($arg),*),
            54 => $f::<$crate::raw::Raw54>($($arg),*),
            55 => $f::<$crate::raw::Raw55>($($arg),*),
            56 => $f::<$crate::raw::Raw56>($($arg),*),
            57 => $f::<$crate::raw::Raw57>($($arg),*),
            58 => $f::<$crate::raw::Raw58>($($arg),*),
            59 => $f::<$crate::raw::Raw59>($($arg),*),
            60 => $f::<$crate::raw::Raw60>($($arg),*),
            61 => $f::<$crate::raw::Raw61>($($arg),*),
            62 => $f::<$crate::raw::Raw62>($($arg),*),
            63 => $f::<$crate::raw::Raw63>($($arg),*),
            64 => $f::<$crate::raw::Raw64>($($arg),*),
            65 => $f::<$crate::raw::Raw65>($($arg),*),
            66 => $f::<$crate::raw::Raw66>($($arg),*),
            67 => $f::<$crate::raw::Raw67>($($arg),*),
            68 => $f::<$crate::raw::Raw68>($($arg),*),
            69 => $f::<$crate::raw::Raw69>($($arg),*),
            70 => $f::<$crate::raw::Raw70>($($arg),*),
            71 => $f::<$crate::raw::Raw71>($($arg),*),
            72 => $f::<$crate::raw::Raw72>($($arg),*),
            73 => $f::<$crate::raw::Raw73>($($arg),*),
            74 => $f::<$crate::raw::Raw74>($($arg),*),
            75 => $f::<$crate::raw::Raw75>($($arg),*),
            76 => $f::<$crate::raw::Raw76>($($arg),*),
            77 => $f::<$crate::raw::Raw77>($($arg),*),
            78 => $f::<$crate::raw::Raw78>($($arg),*),
            79 => $f::<$crate::raw::Raw79>($($arg),*),
            80 => $f::<$crate::raw::Raw80>($($arg),*),
            81 => $f::<$crate::raw::Raw81>($($arg),*),
            82 => $f::<$crate::raw::Raw82>($($arg),*),
            83 => $f::<$crate::raw::Raw83>($($arg),*),
            84 => $f::<$crate::raw::Raw84>($($arg),*),
            85 => $f::<$crate::raw::Raw85>($($arg),*),
            86 => $f::<$crate::raw::Raw86>($($arg),*),
            87 => $f::<$crate::raw::Raw87>($($arg),*),
            88 => $f::<$crate::raw::Raw88>($($arg),*),
            89 => $f::<$crate::raw::Raw89>($($arg),*),
            90 => $f::<$crate::raw::Raw90>($($arg),*),
            91 => $f::<$crate::raw::Raw91>($($arg),*),
            92 => $f::<$crate::raw::Raw92>($($arg),*),
            93 => $f::<$crate::raw::Raw93>($($arg),*),
            94 => $f::<$crate::raw::Raw94>($($arg),*),
            95 => $f::<$crate::raw::Raw95>($($arg),*),
            96 => $f::<$crate::raw::Raw96>($($arg),*),
            97 => $f::<$crate::raw::Raw97>($($arg),*),
            98 => $f::<$crate::raw::Raw98>($($arg),*),
            99 => $f::<$crate::raw::Raw99>($($arg),*),
            100 => $f::<$crate::raw::Raw100>($($arg),*),
            101 => $f::<$crate::raw::Raw101>($($arg),*),
            102 => $f::<$crate::raw::Raw102>($($arg),*),
            103 => $f::<$crate::raw::Raw103>($($arg),*),
            104 => $f::<$crate::raw::Raw104>($($arg),*),
            105 => $f::<$crate::raw::Raw105>($($arg),*),
            106 => $f::<$crate::raw::Raw106>($($arg),*),
            107 => $f::<$crate::raw::Raw107>($($arg),*),
            108 => $f::<$crate::raw::Raw108>($($arg),*),
            109 => $f::<$crate::raw::Raw109>($($arg),*),
            110 => $f::<$crate::raw::Raw110>($($arg),*),
            111 => $f::<$crate::raw::Raw111>($($arg),*),
            112 => $f::<$crate::raw::Raw112>($($arg),*),
            113 => $f::<$crate::raw::Raw113>($($arg),*),
            114 => $f::<$crate::raw::Raw114>($($arg),*),
            115 => $f::<$crate::raw::Raw115>($($arg),*),
            116 => $f::<$crate::raw::Raw116>($($arg),*),
            117 => $f::<$crate::raw::Raw117>($($arg),*),
            118 => $f::<$crate::raw::Raw118>($($arg),*),
            119 => $f::<$crate::raw::Raw119>($($arg),*),
            120 => $f::<$crate::raw::Raw120>($($arg),*),
            121 => $f::<$crate::raw::Raw121>($($arg),*),
            122 => $f::<$crate::raw::Raw122>($($arg),*),
            123 => $f::<$crate::raw::Raw123>($($arg),*),
            124 => $f::<$crate::raw::Raw124>($($arg),*),
            125 => $f::<$crate::raw::Raw125>($($arg),*),
            126 => $f::<$crate::raw::Raw126>($($arg),*),
            127 => $f::<$crate::raw::Raw127>($($arg),*),
            128 => $f::<$crate::raw::Raw128>($($arg),*),
            _ => unreachable!("structs of more than 512 bytes are not generated"),
        }
    };
}
