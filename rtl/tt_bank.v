`default_nettype none
// tt_bank: one on-chip memory bank of the accelerator: WIDTH-bit words, one write port and READ_PORTS
// synchronous read ports (data valid the cycle after rd_en). Each read port reads its own copy of the
// words (every copy takes every write): FPGA block RAMs give one read and one write port per copy, and the
// compiler only needs two reads of one bank in the same cycle (two activations, or a gradient and its
// momentum), so a bank costs READ_PORTS x DEPTH x WIDTH bits. A read of the address written in the same
// cycle returns the old word. The words are not reset: a reset of the accelerator leaves the state readable.
// OUT_REG = 1 adds a register after the read register (data valid two cycles after rd_en), which takes the
// RAM's slow clock-to-out off the paths behind it. A tool that merges it into the block RAM's own output
// register removes that delay entirely; yosys 0.70 does not (ECP5: it stays a fabric register after the mux
// over the cascaded block RAMs of a deep bank).
module tt_bank #(
  parameter integer WIDTH      = 16,  // bits per word, 1..32
  parameter integer DEPTH      = 1024,
  parameter integer AW         = 10,  // local address width: DEPTH <= 2^AW
  parameter integer READ_PORTS = 1,   // 1..2
  parameter integer OUT_REG    = 0    // 1: an output register (read latency 2)
) (
  input  wire                       clk,
  input  wire                       wr_en,
  input  wire [AW-1:0]              wr_addr,
  input  wire [WIDTH-1:0]           wr_data,
  input  wire [READ_PORTS-1:0]      rd_en,
  input  wire [READ_PORTS*AW-1:0]   rd_addr,
  output wire [READ_PORTS*WIDTH-1:0] rd_data
);

  generate
    if (WIDTH < 1 || WIDTH > 32) begin : g_bad_width
      error_tt_bank_WIDTH_must_be_1_to_32 u_error ();
    end
    if (DEPTH < 1 || DEPTH > (1 << AW)) begin : g_bad_depth
      error_tt_bank_DEPTH_must_be_1_to_2_pow_AW u_error ();
    end
    if (READ_PORTS < 1 || READ_PORTS > 2) begin : g_bad_ports
      error_tt_bank_READ_PORTS_must_be_1_or_2 u_error ();
    end
    if (OUT_REG < 0 || OUT_REG > 1) begin : g_bad_out_reg
      error_tt_bank_OUT_REG_must_be_0_or_1 u_error ();
    end
  endgenerate

  // Words past DEPTH do not exist: the router (tt_banks) never sends their addresses, so a copy is
  // indexed by the low IW address bits and is exactly DEPTH words.
  localparam integer IW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  wire unused_addr = ^{wr_addr, rd_addr};

  genvar p;
  generate
    for (p = 0; p < READ_PORTS; p = p + 1) begin : g_copy
      reg [WIDTH-1:0] mem [0:DEPTH-1] /* verilator public_flat_rd */;  // the host checker reads it (verif/host.py Backdoor)
      reg [WIDTH-1:0] rd_q;
      always @(posedge clk) begin
        if (wr_en) begin
          mem[wr_addr[IW-1:0]] <= wr_data;
        end
        if (rd_en[p]) begin
          rd_q <= mem[rd_addr[p*AW +: IW]];
        end
      end
      if (OUT_REG != 0) begin : g_out_reg
        reg [WIDTH-1:0] out_q;
        always @(posedge clk) begin
          out_q <= rd_q;
        end
        assign rd_data[p*WIDTH +: WIDTH] = out_q;
      end else begin : g_direct
        assign rd_data[p*WIDTH +: WIDTH] = rd_q;
      end
    end
  endgenerate

endmodule
`default_nettype wire
