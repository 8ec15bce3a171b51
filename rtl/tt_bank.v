`default_nettype none
// tt_bank: one on-chip memory bank of the accelerator: WIDTH-bit words, one write port and READ_PORTS
// synchronous read ports (data valid the cycle after rd_en). Each read port reads its own copy of the
// words (every copy takes every write): FPGA block RAMs give one read and one write port per copy, and the
// compiler needs at most two reads of one bank in the same cycle (two activations, a gradient and its momentum,
// or a bias's first moment and the bias in its Adam step), so a bank costs READ_PORTS x DEPTH x WIDTH bits. The accelerator never reads a word in the cycle it
// is written (a unit reads ahead of its writes at other addresses, the host only while no program runs), so the
// RAMs carry no_rw_check: synthesis builds them without read-during-write logic (on ECP5 a comparator, a copy of
// the write data and a multiplexer behind every block RAM); a simulation stops with an error if such a read
// happens once a reset has ended (rst serves that check alone: before a reset, the simulator's random initial
// values drive the ports). The words are not reset: a reset of the accelerator leaves the state readable.
// Each memory is a tt_prim_ram of the build's technology (TECH). OUT_REG = 1 adds its output register (data valid two
// cycles after rd_en), which takes the block RAM's slow read clock-to-out off the paths behind it: on ECP5 the
// DP16KD's own register, elsewhere a fabric register. OUT_REG = 2 adds a fabric register behind each block RAM's
// (data valid three cycles after rd_en): the route from a block RAM across the chip and the multiplexer over a copy's
// block RAMs then each get a cycle.
// VEC > 1 builds each copy in VEC columns (word i in column i % VEC, row i / VEC), each column a memory of its own. A
// read takes the n1 + 1 consecutive words addr .. addr + n1, n1 = rd_run_n1 (0: the word alone; at most VEC - 1;
// tt_contract's vector load a whole row, a lane sum's or rows' run of R words of a, a wide drain's old run). The run
// may start anywhere in a row and go on into the next: column c reads the address's row if c >= the address's column,
// the next row if c < it, and only the run's n1 + 1 columns are read, so a read never touches a word outside it
// (another tensor's word in the same rows may be written in that cycle). Besides the word, a read port returns the word
// each column read (rd_vec, column c in [WIDTH*c +: WIDTH]); the columns outside the run keep their last read. A write
// names a row (wr_addr, its column bits ignored) and the columns it writes (wr_mask), column c taking wr_data's word c:
// one word (one column), or a run of the contraction engine's wide drain.
module tt_bank #(
  parameter integer WIDTH      = 16,  // bits per word, 1..32
  parameter integer DEPTH      = 1024,
  parameter integer AW         = 10,  // local address width: DEPTH <= 2^AW
  parameter integer READ_PORTS = 1,   // 1..3
  parameter integer OUT_REG    = 0,   // output registers: 0, 1 (read latency 2) or 2 (read latency 3)
  parameter integer BLOCK_BITS = 0,   // bits per block RAM of the part (0: one memory per column)
  parameter integer VEC        = 1,   // words per row (columns): 1, 2, 4, 8 or 16
  parameter [63:0] TECH       = "generic"  // the block RAMs' technology (rtl/prim/tt_prim_ram.v)
) (
  input  wire                            clk,
  input  wire                            rst,       // the read-during-write check's only: the words are never reset
  input  wire                            wr_en,
  input  wire [AW-1:0]                   wr_addr,   // the row of wr_addr (with VEC = 1 the word)
  input  wire [VEC-1:0]                  wr_mask,   // the columns written
  input  wire [VEC*WIDTH-1:0]            wr_data,   // column c's word in [WIDTH*c +: WIDTH]
  input  wire [READ_PORTS-1:0]           rd_en,
  input  wire [READ_PORTS*4-1:0]         rd_run_n1, // words each port's read takes after its address's (<= VEC - 1)
  input  wire [READ_PORTS*AW-1:0]        rd_addr,
  output wire [READ_PORTS*WIDTH-1:0]     rd_data,
  output wire [READ_PORTS*VEC*WIDTH-1:0] rd_vec    // each port's words by column: the column's last read
);

  generate
    if (WIDTH < 1 || WIDTH > 32) begin : g_bad_width
      error_tt_bank_WIDTH_must_be_1_to_32 u_error ();
    end
    if (DEPTH < 1 || DEPTH > (1 << AW)) begin : g_bad_depth
      error_tt_bank_DEPTH_must_be_1_to_2_pow_AW u_error ();
    end
    if (READ_PORTS < 1 || READ_PORTS > 3) begin : g_bad_ports
      error_tt_bank_READ_PORTS_must_be_1_to_3 u_error ();
    end
    if (OUT_REG < 0 || OUT_REG > 2) begin : g_bad_out_reg
      error_tt_bank_OUT_REG_must_be_0_to_2 u_error ();
    end
    if (BLOCK_BITS < 0) begin : g_bad_block_bits
      error_tt_bank_BLOCK_BITS_must_be_0_or_positive u_error ();
    end
    if (VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8 && VEC != 16) begin : g_bad_vec
      error_tt_bank_VEC_must_be_1_2_4_8_or_16 u_error ();
    end
  endgenerate

  // Words past DEPTH do not exist: the router (tt_banks) never sends their addresses nor a run that reaches past
  // DEPTH, so a copy is indexed by the low IW address bits: the column by the low CW of them, the row by the rest.
  // Every column has ROWS rows (the last columns may hold a word past DEPTH, never written nor read).
  localparam integer IW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  localparam integer CW = (VEC > 1) ? $clog2(VEC) : 0;  // column bits
  localparam integer ROWS = (DEPTH + VEC - 1) / VEC;
  wire unused_addr = ^{wr_addr, rd_addr};

  // Each column is NBLK memories of BLK rows (a power of two; the last block holds the rest), BLK the most words
  // of WIDTH bits that fit BLOCK_BITS: one block RAM each, so every block RAM gets its own read and output
  // registers, and the mux over the blocks reads registers, not the block RAMs' slow outputs.
  /* verilator coverage_off */  // evaluated at elaboration only
  function integer pow2_floor(input integer n);
    integer v;
    begin
      v = 1;
      while (v * 2 <= n) v = v * 2;
      pow2_floor = v;
    end
  endfunction
  /* verilator coverage_on */
  localparam integer BLK_FIT = (BLOCK_BITS > 0) ? pow2_floor((BLOCK_BITS >= WIDTH) ? BLOCK_BITS / WIDTH : 1) : 0;
  localparam integer BLK = (BLOCK_BITS == 0 || ROWS <= BLK_FIT) ? ROWS : BLK_FIT;
  localparam integer NBLK = (ROWS + BLK - 1) / BLK;
  localparam integer BW = (BLK > 1) ? $clog2(BLK) : 1;  // row bits inside a block
  localparam integer SW = (NBLK > 1) ? $clog2(NBLK) : 1;  // block select bits
  localparam integer RW = (IW > CW) ? IW - CW : 1;  // row bits

  localparam [RW-1:0] ROW_ONE = 1;
  localparam [31:0]   VEC_U = VEC;  // VEC as a vector: its low bits offset a column into the next row

`ifndef SYNTHESIS
  // Set by the first cycle of a reset: until then the read-during-write check below looks at random values.
  reg reset_seen_q;
  initial reset_seen_q = 1'b0;
  always @(posedge clk) begin
    reset_seen_q <= reset_seen_q || rst;
  end
`else
  wire unused_rst = rst;
`endif

  genvar p;
  genvar c;
  genvar b;
  generate
    for (p = 0; p < READ_PORTS; p = p + 1) begin : g_copy
      wire [IW-1:0] ra = rd_addr[p*AW +: IW];
      wire [IW-1:0] wa = wr_addr[IW-1:0];
      wire [RW-1:0] ra_row;  // row and column of the read and of the write
      wire [RW-1:0] wa_row;
      wire [4:0]    ra_col;  // 5 bits: any column, and the run's positions below (up to 2 VEC - 1)
      if (VEC == 1) begin : g_one_col
        assign ra_row = ra[RW-1:0];
        assign wa_row = wa[RW-1:0];
        assign ra_col = 5'd0;
      end else begin : g_cols
        assign ra_row = ra[IW-1:CW];
        assign wa_row = wa[IW-1:CW];
        assign ra_col = {{(5-CW){1'b0}}, ra[CW-1:0]};
      end
      // The next row, once per port: the columns before the address's column read it.
      wire [RW-1:0] ra_next = ra_row + ROW_ONE;
      // The run as positions from column 0 of the address's row (VEC and up: in the next row): ra_col to ra_end - 1.
      wire [4:0]    ra_end = ra_col + {1'b0, rd_run_n1[4*p +: 4]} + 5'd1;
      wire [BW-1:0] wa_word = wa_row[BW-1:0];  // row inside its block of the write
      // The column of the last read (rd_data's word), delayed like its data.
      reg [CW:0] col_q;
      always @(posedge clk) begin
        if (rd_en[p]) begin
          col_q <= ra_col[CW:0];
        end
      end
      // Every column's block of its last read (blk_q below), and the selects of the output multiplexers: the column
      // and the blocks of the last read, behind the output registers (OUT_REG of them).
      wire [VEC*SW-1:0] blk_q_all;
      wire [VEC*SW-1:0] sel_blk_all;
      wire [CW:0]       sel_col;
      if (OUT_REG != 0) begin : g_sel_out
        tt_delay #(
          .WIDTH (VEC*SW+CW+1),
          .DEPTH (OUT_REG),
          .RESET (0)
        ) u_sel_out (
          .clk (clk),
          .rst (1'b0),
          .d   ({blk_q_all, col_q}),
          .q   ({sel_blk_all, sel_col})
        );
      end else begin : g_sel_direct
        assign {sel_blk_all, sel_col} = {blk_q_all, col_q};
      end
      wire [VEC-1:0]       col_rd;    // the columns the read takes
      wire [VEC*WIDTH-1:0] row_data;  // every column's word of its last read
`ifndef SYNTHESIS
      wire [VEC-1:0]       col_on_wr_row;  // the columns whose read row is the written row (the checker below)
`endif
      for (c = 0; c < VEC; c = c + 1) begin : g_col
        localparam [4:0] C = c;
        localparam [4:0] C_NEXT = C + VEC_U[4:0];  // the column's position in the next row
        // Before the address's column, the column holds the run's word of the next row (its block may differ).
        wire          wrap = C < ra_col;
        wire [RW-1:0] rd_row = wrap ? ra_next : ra_row;
        wire [BW-1:0] rd_word = rd_row[BW-1:0];  // row inside its block of the column's read
        wire [SW-1:0] rd_blk;  // block of the column's read and of the write
        wire [SW-1:0] wa_blk;
        if (NBLK == 1) begin : g_one
          assign rd_blk = {SW{1'b0}};
          assign wa_blk = {SW{1'b0}};
        end else begin : g_split
          assign rd_blk = rd_row[RW-1:BW];
          assign wa_blk = wa_row[RW-1:BW];
        end
        assign col_rd[c] = rd_en[p] && (wrap ? C_NEXT : C) < ra_end;
`ifndef SYNTHESIS
        assign col_on_wr_row[c] = rd_row == wa_row;
`endif
        // The block of the column's last read, delayed like its data: a column outside a run keeps its word.
        reg [SW-1:0] blk_q;
        always @(posedge clk) begin
          if (col_rd[c]) begin
            blk_q <= rd_blk;
          end
        end
        assign blk_q_all[SW*c +: SW] = blk_q;
        wire [SW-1:0] sel_blk = sel_blk_all[SW*c +: SW];
        wire [NBLK*WIDTH-1:0] blk_data;  // every block's registered read data
        wire                  col_wr = wr_en && wr_mask[c];
        for (b = 0; b < NBLK; b = b + 1) begin : g_blk
          localparam integer N = (b == NBLK - 1) ? ROWS - b * BLK : BLK;
          localparam integer NW = (N > 1) ? $clog2(N) : 1;  // <= BW: only the last block can be shorter
          wire [WIDTH-1:0] ram_data;
          tt_prim_ram #(
            .WIDTH   (WIDTH),
            .DEPTH   (N),
            .AW      (NW),
            .OUT_REG (OUT_REG != 0 ? 1 : 0),
            .TECH    (TECH)
          ) u_ram (
            .clk     (clk),
            .wr_en   (col_wr && wa_blk == b[SW-1:0]),
            .wr_part (1'b1),
            .wr_addr (wa_word[NW-1:0]),
            .wr_data (wr_data[WIDTH*c +: WIDTH]),
            .rd_en   (col_rd[c] && rd_blk == b[SW-1:0]),
            .rd_addr (rd_word[NW-1:0]),
            .rd_data (ram_data)
          );
          if (OUT_REG == 2) begin : g_fabric_reg
            reg [WIDTH-1:0] ram_q;
            always @(posedge clk) begin
              ram_q <= ram_data;
            end
            assign blk_data[b*WIDTH +: WIDTH] = ram_q;
          end else begin : g_ram_out
            assign blk_data[b*WIDTH +: WIDTH] = ram_data;
          end
        end
        assign row_data[c*WIDTH +: WIDTH] = blk_data[sel_blk*WIDTH +: WIDTH];
      end
      assign rd_data[p*WIDTH +: WIDTH] = row_data[sel_col*WIDTH +: WIDTH];
      assign rd_vec[p*VEC*WIDTH +: VEC*WIDTH] = row_data;
`ifndef SYNTHESIS
      // no_rw_check's premise, checked in every simulation that uses the banks (a checker: not coverage): no column
      // reads the row written into it in the same cycle.
      /* verilator coverage_off */
      always @(posedge clk) begin
        if (reset_seen_q && !rst && wr_en && |(col_rd & wr_mask & col_on_wr_row)) begin
          $display("ERROR: tt_bank %m: port %0d reads word %0d in the cycle it is written", p, wa);
          $finish;
        end
      end
      /* verilator coverage_on */
`endif
    end
  endgenerate

endmodule
`default_nettype wire
